// The device API including the emitter (fixture).
#include "Emit/EmitHIP.h"
