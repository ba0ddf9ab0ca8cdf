pragma circom 2.0.0;

// No public signals at all: two private inputs and their product.
template NoPub() {
    signal input x;
    signal input y;
    signal z;
    z <== x * y;
}

component main = NoPub();
