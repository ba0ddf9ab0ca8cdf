pragma circom 2.0.0;

// 24 public outputs y[i] = y[i-1] * x + i, and a public input.
template ManyPub(N) {
    signal input x;
    signal input seed;
    signal output y[N];
    y[0] <== seed * x;
    for (var i = 1; i < N; i++) {
        y[i] <== y[i - 1] * x + i;
    }
}

component main {public [seed]} = ManyPub(24);
