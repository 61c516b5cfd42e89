// lib/ reaching up into kernels/ (fixture).
#pragma once
#include "Registry.h"
