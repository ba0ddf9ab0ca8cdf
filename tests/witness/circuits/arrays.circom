pragma circom 2.0.0;

// Array inputs (a 2x3 matrix, flattened row by row), one public input, two public outputs,
// a log() line and an assert that fails for k = 7.
template Arrays() {
    signal input a[2][3];
    signal input k;
    signal output s[2];
    signal acc[2][4];
    for (var i = 0; i < 2; i++) {
        acc[i][0] <== k;
        for (var j = 0; j < 3; j++) {
            acc[i][j + 1] <== acc[i][j] * a[i][j];
        }
        s[i] <== acc[i][3];
    }
    log("row products", s[0], s[1]);
    assert(k != 7);
}

component main {public [k]} = Arrays();
