/*
 * Signed keys of each size: 1- and 2-byte keys print unsigned, 4- and
 * 8-byte keys signed; all sort unsigned (Oracle DTrace test
 * aggs/tst.signedkeys, aggregations part).
 */

#pragma D option aggsortkey

BEGIN
{
	@i8[(char)-2] = sum(-2); @i8[(char)-1] = sum(-1); @i8[(char)0] = sum(0);
	@i8[(char)1] = sum(1); @i8[(char)2] = sum(2);
	@i16[(short)-2] = sum(-2); @i16[(short)-1] = sum(-1); @i16[(short)0] = sum(0);
	@i16[(short)1] = sum(1); @i16[(short)2] = sum(2);
	@i32[-2] = sum(-2); @i32[-1] = sum(-1); @i32[0] = sum(0);
	@i32[1] = sum(1); @i32[2] = sum(2);
	@i64[(long long)-2] = sum(-2); @i64[(long long)-1] = sum(-1);
	@i64[(long long)0] = sum(0); @i64[(long long)1] = sum(1);
	@i64[(long long)2] = sum(2);
	exit(0);
}
