/*
 * DTrace's wide conversions: %lc and %wc of an int, %ls and %ws of an array of 32-bit
 * integers (printed up to its first 0), all as UTF-8, with widths and precisions counted
 * in bytes as the C library counts them; a precision cuts no character in two.
 */

int w[8];

BEGIN
{
	w[0] = 'h';
	w[1] = 0xe9;
	w[2] = 'l';
	w[3] = 'l';
	w[4] = 'o';
	printf("[%ls][%ws][%8ls][%-8ls][%.2ls][%.3ls]\n", w, w, w, w, w, w);
	printf("[%lc][%wc][%3lc][%-3lc][%lc]\n", 'a', 0x263a, 0xe9, 0xe9, 0x1f600);
	w[5] = 0x263a;
	printf("%ls|%*ls|%d\n", w, 12, w, sizeof (w));
	exit(0);
}
