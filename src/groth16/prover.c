/* The curve-independent prover (prover.h). */
#include "groth16/prover.h"

void cuzk__pk_base_init(cuzk__pk_base *pk)
{
    for (int d = 0; d < CUZK_MAX_DEVICES; d++)
        cuzk__pk_device_init(&pk->dev[d]);
}

void cuzk__pk_base_free(cuzk__pk_base *pk)
{
    for (int d = 0; d < CUZK_MAX_DEVICES; d++)
        cuzk__pk_device_free(&pk->dev[d]);
}
