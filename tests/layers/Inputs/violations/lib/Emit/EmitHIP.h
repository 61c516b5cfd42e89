// The emitter (fixture).
#pragma once
