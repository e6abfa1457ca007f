// tests/test_elementwise.cpp: placeholder, filled in by its owner.
#include "test_util.h"
