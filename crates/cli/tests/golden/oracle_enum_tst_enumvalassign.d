/* Oracle DTrace test enum/tst.EnumValAssign.d */
#pragma D option quiet

enum colors {
	RED,
	ORANGE = 5 + 5,
	YELLOW = 2,
	GREEN,
	BLUE = GREEN + ORANGE,
 	PINK = 5/4,
	INDIGO = -2,
	VIOLET
};

profile:::tick-1sec
/(0 == RED) && (10 == ORANGE) && (2 == YELLOW) && (3 == GREEN) &&
    (13 == BLUE) && (1 == PINK) && (-2 == INDIGO) && (-1 == VIOLET)/
{
	exit(0);
}
