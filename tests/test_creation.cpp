// tests/test_creation.cpp: placeholder, filled in by its owner.
#include "test_util.h"
