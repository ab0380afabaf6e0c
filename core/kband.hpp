// kband umbrella header: include this one file.
#pragma once

#include "kband_Core.hpp"
#include "kband_Layouts.hpp"
#include "kband_Thomas.hpp"
#include "kband_PCR.hpp"
#include "kband_Tridiagonal.hpp"
#include "kband_Householder.hpp"
#include "kband_GTSV.hpp"
