pragma circom 2.0.0;

include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/comparators.circom";

// circomlib's comparators as a range proof: x fits 32 bits (Num2Bits), lo <= x < hi
// (GreaterEqThan, LessThan); lo and hi public, and whether x equals lo (IsEqual) as the output.
template Range(n) {
    signal input x;
    signal input lo;
    signal input hi;
    signal output atLow;
    component bits = Num2Bits(n);
    bits.in <== x;
    component ge = GreaterEqThan(n);
    ge.in[0] <== x;
    ge.in[1] <== lo;
    ge.out === 1;
    component lt = LessThan(n);
    lt.in[0] <== x;
    lt.in[1] <== hi;
    lt.out === 1;
    component eq = IsEqual();
    eq.in[0] <== x;
    eq.in[1] <== lo;
    atLow <== eq.out;
}

component main {public [lo, hi]} = Range(32);
