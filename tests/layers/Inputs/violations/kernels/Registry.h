// A shipped kernel's registry (fixture).
#pragma once
