pragma circom 2.0.0;

include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/switcher.circom";

// Membership in a Poseidon Merkle tree of depth D, built from circomlib: the leaf is the
// Poseidon hash of a 3-value secret, its position a number whose bits (Num2Bits: index < 2^D)
// pick the side at each level; the root is the public output. The round constants are
// BN254's; on BLS12-381 the same program computes in that curve's field.
template Membership(D) {
    signal input secret[3];
    signal input index;
    signal input siblings[D];
    signal output root;
    component leaf = Poseidon(3);
    for (var i = 0; i < 3; i++) {
        leaf.inputs[i] <== secret[i];
    }
    component bits = Num2Bits(D);
    bits.in <== index;
    component side[D];
    component hash[D];
    signal node[D + 1];
    node[0] <== leaf.out;
    for (var i = 0; i < D; i++) {
        side[i] = Switcher();
        side[i].sel <== bits.out[i];
        side[i].L <== node[i];
        side[i].R <== siblings[i];
        hash[i] = Poseidon(2);
        hash[i].inputs[0] <== side[i].outL;
        hash[i].inputs[1] <== side[i].outR;
        node[i + 1] <== hash[i].out;
    }
    root <== node[D];
}

component main = Membership(8);
