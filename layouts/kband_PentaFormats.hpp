// (to be written)
#pragma once

#include "kband_Core.hpp"
