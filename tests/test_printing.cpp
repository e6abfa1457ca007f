// tests/test_printing.cpp: placeholder, filled in by its owner.
#include "test_util.h"
