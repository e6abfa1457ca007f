// tests/test_moving.cpp: placeholder, filled in by its owner.
#include "test_util.h"
