#pragma D option quiet


BEGIN
{
	int_orig = 100;
	int_pos = 100+1;
	int_neg = 100-1;

	int_pos_before = ++int_orig;
	int_orig = 100;
	int_neg_before = --int_orig;
	int_orig = 100;
	int_pos_after = int_orig++;
	int_orig = 100;
	int_neg_after = int_orig--;
	int_orig = 100;

}

tick-1
/int_pos_before  == int_pos && int_neg_before == int_neg &&
	int_pos_after == int_orig && int_pos_after == int_orig/
{
	exit(0);
}


tick-1
/int_pos_before  != int_pos || int_neg_before != int_neg ||
	int_pos_after != int_orig || int_pos_after != int_orig/
{
	exit(1);
}
