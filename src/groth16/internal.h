/* Internal helpers shared by the groth16 layer's files. */
#ifndef CUZK_GROTH16_INTERNAL_H
#define CUZK_GROTH16_INTERNAL_H

#include "cuzk/groth16.h"
#include "ec/encode.h"

/* e(alpha1, beta2) as 12 decimal strings in ffjavascript's F12.toObject order:
 * c0.c0.c0, c0.c0.c1, c0.c1.c0, c0.c1.c1, c0.c2.c0, c0.c2.c1, then c1.* likewise. */
cuzk_err cuzk__alphabeta_dec(const cuzk_vk *vk, char (*s)[CUZK_EC_DEC_MAX], cuzk_errbuf *eb);

#endif
