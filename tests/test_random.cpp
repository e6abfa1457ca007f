// tests/test_random.cpp: placeholder, filled in by its owner.
#include "test_util.h"
