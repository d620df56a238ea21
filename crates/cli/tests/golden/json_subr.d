/*
 * json(): values selected by member names and array positions, as illumos DTrace's
 * dtrace_json() returns them (strings without their quotes and with escapes as written,
 * numbers and literals as written, objects and arrays whole), NULL for whatever is not
 * there or is not what the selector expects.
 */
BEGIN
{
	j = "{\"id\": 42, \"name\": \"disk \\\"a\\\"\", \"u\": \"\\u00e9t\\u00E9\", \"ok\": true, \"gone\": null, \"ratio\": -0.25e+1, \"sizes\": [8, 16, 32], \"owner\": {\"uid\": 0, \"groups\": [{\"g\": \"wheel\"}, {\"g\": \"adm\"}]}, \"empty\": {}}";
	printf("id      [%s]\n", json(j, "id"));
	printf("name    [%s]\n", json(j, "name"));
	printf("u       [%s]\n", json(j, "u"));
	printf("ok      [%s]\n", json(j, "ok"));
	printf("gone    [%s]\n", json(j, "gone"));
	printf("ratio   [%s]\n", json(j, "ratio"));
	printf("sizes   [%s]\n", json(j, "sizes"));
	printf("sizes0  [%s]\n", json(j, "sizes[0]"));
	printf("sizes2  [%s]\n", json(j, "sizes[2]"));
	printf("owner   [%s]\n", json(j, "owner"));
	printf("uid     [%s]\n", json(j, "owner.uid"));
	printf("g1      [%s]\n", json(j, "owner.groups[1].g"));
	printf("empty   [%s]\n", json(j, "empty"));
	printf("top     [%s]\n", json("[\"a\", [1, 2], {\"k\": \"v\"}]", "[2].k"));
	printf("top1    [%s]\n", json("[\"a\", [1, 2], {\"k\": \"v\"}]", "[1]"));
	printf("strtoll %d\n", strtoll(json(j, "sizes[1]")) * 2);
	printf("missing %d %d %d\n", json(j, "nope") == NULL, json(j, "sizes[3]") == NULL,
	    json(j, "owner.nope") == NULL);
	printf("nested  %d %d %d\n", json(j, "id.x") == NULL, json(j, "name.x") == NULL,
	    json(j, "ok.x") == NULL);
	printf("bad     %d %d %d\n", json("\"just a string\"", "a") == NULL,
	    json("{\"a\" 1}", "a") == NULL, json("{\"a\": 0x10}", "a") == NULL);
	printf("early   [%s]\n", json("{\"a\": 1, \"b\": oops", "a"));
}

BEGIN
/json("{\"action\": \"ignore\"}", "action") != "ignore"/
{
	printf("predicate wrong\n");
}

BEGIN
/json("{\"action\": \"run\"}", "action") == "run"/
{
	printf("predicate run\n");
	exit(0);
}
