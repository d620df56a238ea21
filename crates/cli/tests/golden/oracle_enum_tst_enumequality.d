/* Oracle DTrace test enum/tst.EnumEquality.d */
#pragma D option quiet

enum colors {
	RED,
	GREEN,
	BLUE
};

enum shades {
	WHITE,
	BLACK,
	YELLOW
};


profile:::tick-1sec
/(WHITE == RED) && (YELLOW == BLUE) && (GREEN == BLACK)/
{
	exit(0);
}
