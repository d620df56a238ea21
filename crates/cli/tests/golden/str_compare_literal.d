/*
 * Comparisons of strings with literals, the literal on either side: equal, a prefix
 * either way, differing before, at and after where the literal ends, empty strings,
 * and under a strsize shorter than the literal (both sides cut to 8 characters).
 * Each line is ==, !=, <, <=, >, >= as 0 or 1 (strcmp's order, bytes unsigned).
 */
/* flags: -q -x strsize=8 */

#pragma D option quiet

BEGIN
{
	s["eq"] = "getppid";
	s["short"] = "getpp";
	s["long"] = "getppidx";
	s["before"] = "getapid";
	s["at"] = "getppie";
	s["high"] = "get\xffpid";
	s["empty"] = "";
	s["cut"] = "abcdefgZZ";
}

BEGIN
{
	printf("%d%d%d%d%d%d eq\n", s["eq"] == "getppid", s["eq"] != "getppid",
	    s["eq"] < "getppid", s["eq"] <= "getppid", s["eq"] > "getppid", s["eq"] >= "getppid");
	printf("%d%d%d%d%d%d short\n", s["short"] == "getppid", s["short"] != "getppid",
	    s["short"] < "getppid", s["short"] <= "getppid", s["short"] > "getppid",
	    s["short"] >= "getppid");
	printf("%d%d%d%d%d%d long\n", s["long"] == "getppid", s["long"] != "getppid",
	    s["long"] < "getppid", s["long"] <= "getppid", s["long"] > "getppid",
	    s["long"] >= "getppid");
	printf("%d%d%d%d%d%d before\n", "getppid" == s["before"], "getppid" != s["before"],
	    "getppid" < s["before"], "getppid" <= s["before"], "getppid" > s["before"],
	    "getppid" >= s["before"]);
	printf("%d%d%d%d%d%d at\n", "getppid" == s["at"], "getppid" != s["at"],
	    "getppid" < s["at"], "getppid" <= s["at"], "getppid" > s["at"], "getppid" >= s["at"]);
	printf("%d%d%d%d%d%d high\n", s["high"] == "getppid", s["high"] != "getppid",
	    s["high"] < "getppid", s["high"] <= "getppid", s["high"] > "getppid",
	    s["high"] >= "getppid");
	printf("%d%d%d%d%d%d empty\n", s["empty"] == "", s["empty"] != "", s["empty"] < "a",
	    "" < s["eq"], s["eq"] > "", "" >= s["empty"]);
	printf("%d%d%d%d%d%d cut\n", s["cut"] == "abcdefgYY", s["cut"] != "abcdefgYY",
	    s["cut"] < "abcdefgYY", s["cut"] <= "abcdefg", s["cut"] > "abcdefgYY",
	    s["cut"] >= "abcdefh");
	exit(0);
}
