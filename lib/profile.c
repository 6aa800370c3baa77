/* SPDX-License-Identifier: MIT */
/* lib/profile.c - placeholder until the profile area lands. */
#include "profile.h"
