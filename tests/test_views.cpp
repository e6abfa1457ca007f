// tests/test_views.cpp: placeholder, filled in by its owner.
#include "test_util.h"
