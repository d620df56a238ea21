/* Oracle DTrace test enum/tst.EnumTrailingComma.d */
#pragma D option quiet

enum colors {
	RED = 1,
	GREEN = 2,
	BLUE = 3,
};

enum weather {
	CLOUDY,
	SUNNY
};

enum {
	CIRCLE,
	SQUARE,
	TRIANGLE,
};

enum {
	HEXAGON,
	OCTAGON
};

typedef enum {
	RIGHT,
	LEFT,
} horizontal_t;

typedef enum {
	TOP,
	BOTTOM
} vertical_t;

typedef enum motor_transport {
	CAR,
	MOTORBIKE,
} motor_transport_t;

typedef enum nonmotor_transport {
	BIKE,
	SKATEBOARD
} nonmotor_trasport_t;

BEGIN
{
	exit(0);
}
