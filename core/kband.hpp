// kband umbrella header: include this one file.
#pragma once

#include "kband_Core.hpp"
#include "kband_Layouts.hpp"
#include "kband_PentaFormats.hpp"
#include "kband_CDS.hpp"
#include "kband_Thomas.hpp"
#include "kband_PCR.hpp"
#include "kband_Hybrid.hpp"
#include "kband_Tridiagonal.hpp"
#include "kband_Householder.hpp"
#include "kband_GTSV.hpp"
#include "kband_Penta.hpp"
#include "kband_Compact.hpp"
#include "kband_DistD2.hpp"
#include "kband_CG.hpp"
