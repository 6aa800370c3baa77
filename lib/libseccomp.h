/* SPDX-License-Identifier: MIT */
/*
 * lib/libseccomp.h - libseccomp's own <seccomp.h>.
 *
 * sbx's lib/seccomp.h shadows it on the -Ilib include path, so lib/ files
 * that need libseccomp include this as <libseccomp.h> (angle brackets: it
 * must be found through -Ilib for #include_next to continue the search in
 * the system directories after it).
 */
#include_next <seccomp.h>
