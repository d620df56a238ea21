/* flags: -q -x errtags */
/*
 * A statement's last node that ends with an operand is made once the parser has read
 * the token after the statement (here the '}' of a statement without ';'), and its
 * error is reported at that token's line.
 */
BEGIN
{
	x = 1;
	y = x &
	    "def"
}
