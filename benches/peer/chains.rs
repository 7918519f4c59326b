//! The penalized chain of 50 links of the peer benchmark as a fixed-size model (the 10-link
//! chain is the library's `mechanism::models::Chain10`, which `tests/it/generated_solves/`
//! checks): Tao–Owhadi's chain of
//! pendula (2014, §4.2) with every bob, sum and rod written out, because the library's
//! `models::PendulumChain` is a family (sizes at run time, the sparse tier). Bob `i` hangs from
//! bob `i − 1` (bob 1 from the origin) on a rod with `|p_i − p_{i−1}|² − 5 = 0`; `M = I` and
//! `V = Σ y_i`, the signs of `models::PendulumChain` with `m = g = 1` and `l² = 5`.

use mechanism::mechanism;

mechanism! {
    /// The chain of 50 unit-mass pendula of Tao–Owhadi §4.2 (`g = 1`, `L² = 5`), unrolled:
    /// 100 coordinates and 50 rods, for penalized Z&Ss on the fixed-size tier.
    pub struct Chain50 {
        coordinates: [
            x1, y1, x2, y2, x3, y3, x4, y4, x5, y5, x6, y6, x7, y7, x8, y8, x9, y9, x10, y10,
            x11, y11, x12, y12, x13, y13, x14, y14, x15, y15, x16, y16, x17, y17, x18, y18, x19,
            y19, x20, y20, x21, y21, x22, y22, x23, y23, x24, y24, x25, y25, x26, y26, x27, y27,
            x28, y28, x29, y29, x30, y30, x31, y31, x32, y32, x33, y33, x34, y34, x35, y35, x36,
            y36, x37, y37, x38, y38, x39, y39, x40, y40, x41, y41, x42, y42, x43, y43, x44, y44,
            x45, y45, x46, y46, x47, y47, x48, y48, x49, y49, x50, y50
        ],
        kinetic: 0.5
            * (dot(x1).powi(2) + dot(y1).powi(2) + dot(x2).powi(2) + dot(y2).powi(2) +
                dot(x3).powi(2) + dot(y3).powi(2) + dot(x4).powi(2) + dot(y4).powi(2) +
                dot(x5).powi(2) + dot(y5).powi(2) + dot(x6).powi(2) + dot(y6).powi(2) +
                dot(x7).powi(2) + dot(y7).powi(2) + dot(x8).powi(2) + dot(y8).powi(2) +
                dot(x9).powi(2) + dot(y9).powi(2) + dot(x10).powi(2) + dot(y10).powi(2) +
                dot(x11).powi(2) + dot(y11).powi(2) + dot(x12).powi(2) + dot(y12).powi(2) +
                dot(x13).powi(2) + dot(y13).powi(2) + dot(x14).powi(2) + dot(y14).powi(2) +
                dot(x15).powi(2) + dot(y15).powi(2) + dot(x16).powi(2) + dot(y16).powi(2) +
                dot(x17).powi(2) + dot(y17).powi(2) + dot(x18).powi(2) + dot(y18).powi(2) +
                dot(x19).powi(2) + dot(y19).powi(2) + dot(x20).powi(2) + dot(y20).powi(2) +
                dot(x21).powi(2) + dot(y21).powi(2) + dot(x22).powi(2) + dot(y22).powi(2) +
                dot(x23).powi(2) + dot(y23).powi(2) + dot(x24).powi(2) + dot(y24).powi(2) +
                dot(x25).powi(2) + dot(y25).powi(2) + dot(x26).powi(2) + dot(y26).powi(2) +
                dot(x27).powi(2) + dot(y27).powi(2) + dot(x28).powi(2) + dot(y28).powi(2) +
                dot(x29).powi(2) + dot(y29).powi(2) + dot(x30).powi(2) + dot(y30).powi(2) +
                dot(x31).powi(2) + dot(y31).powi(2) + dot(x32).powi(2) + dot(y32).powi(2) +
                dot(x33).powi(2) + dot(y33).powi(2) + dot(x34).powi(2) + dot(y34).powi(2) +
                dot(x35).powi(2) + dot(y35).powi(2) + dot(x36).powi(2) + dot(y36).powi(2) +
                dot(x37).powi(2) + dot(y37).powi(2) + dot(x38).powi(2) + dot(y38).powi(2) +
                dot(x39).powi(2) + dot(y39).powi(2) + dot(x40).powi(2) + dot(y40).powi(2) +
                dot(x41).powi(2) + dot(y41).powi(2) + dot(x42).powi(2) + dot(y42).powi(2) +
                dot(x43).powi(2) + dot(y43).powi(2) + dot(x44).powi(2) + dot(y44).powi(2) +
                dot(x45).powi(2) + dot(y45).powi(2) + dot(x46).powi(2) + dot(y46).powi(2) +
                dot(x47).powi(2) + dot(y47).powi(2) + dot(x48).powi(2) + dot(y48).powi(2) +
                dot(x49).powi(2) + dot(y49).powi(2) + dot(x50).powi(2) + dot(y50).powi(2)),
        potential: y1 + y2 + y3 + y4 + y5 + y6 + y7 + y8 + y9 + y10 + y11 + y12 + y13 + y14 + y15 +
            y16 + y17 + y18 + y19 + y20 + y21 + y22 + y23 + y24 + y25 + y26 + y27 + y28 +
            y29 + y30 + y31 + y32 + y33 + y34 + y35 + y36 + y37 + y38 + y39 + y40 + y41 +
            y42 + y43 + y44 + y45 + y46 + y47 + y48 + y49 + y50,
        holonomic: {
            rod1: x1.powi(2) + y1.powi(2) - 5.0,
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - 5.0,
            rod3: (x3 - x2).powi(2) + (y3 - y2).powi(2) - 5.0,
            rod4: (x4 - x3).powi(2) + (y4 - y3).powi(2) - 5.0,
            rod5: (x5 - x4).powi(2) + (y5 - y4).powi(2) - 5.0,
            rod6: (x6 - x5).powi(2) + (y6 - y5).powi(2) - 5.0,
            rod7: (x7 - x6).powi(2) + (y7 - y6).powi(2) - 5.0,
            rod8: (x8 - x7).powi(2) + (y8 - y7).powi(2) - 5.0,
            rod9: (x9 - x8).powi(2) + (y9 - y8).powi(2) - 5.0,
            rod10: (x10 - x9).powi(2) + (y10 - y9).powi(2) - 5.0,
            rod11: (x11 - x10).powi(2) + (y11 - y10).powi(2) - 5.0,
            rod12: (x12 - x11).powi(2) + (y12 - y11).powi(2) - 5.0,
            rod13: (x13 - x12).powi(2) + (y13 - y12).powi(2) - 5.0,
            rod14: (x14 - x13).powi(2) + (y14 - y13).powi(2) - 5.0,
            rod15: (x15 - x14).powi(2) + (y15 - y14).powi(2) - 5.0,
            rod16: (x16 - x15).powi(2) + (y16 - y15).powi(2) - 5.0,
            rod17: (x17 - x16).powi(2) + (y17 - y16).powi(2) - 5.0,
            rod18: (x18 - x17).powi(2) + (y18 - y17).powi(2) - 5.0,
            rod19: (x19 - x18).powi(2) + (y19 - y18).powi(2) - 5.0,
            rod20: (x20 - x19).powi(2) + (y20 - y19).powi(2) - 5.0,
            rod21: (x21 - x20).powi(2) + (y21 - y20).powi(2) - 5.0,
            rod22: (x22 - x21).powi(2) + (y22 - y21).powi(2) - 5.0,
            rod23: (x23 - x22).powi(2) + (y23 - y22).powi(2) - 5.0,
            rod24: (x24 - x23).powi(2) + (y24 - y23).powi(2) - 5.0,
            rod25: (x25 - x24).powi(2) + (y25 - y24).powi(2) - 5.0,
            rod26: (x26 - x25).powi(2) + (y26 - y25).powi(2) - 5.0,
            rod27: (x27 - x26).powi(2) + (y27 - y26).powi(2) - 5.0,
            rod28: (x28 - x27).powi(2) + (y28 - y27).powi(2) - 5.0,
            rod29: (x29 - x28).powi(2) + (y29 - y28).powi(2) - 5.0,
            rod30: (x30 - x29).powi(2) + (y30 - y29).powi(2) - 5.0,
            rod31: (x31 - x30).powi(2) + (y31 - y30).powi(2) - 5.0,
            rod32: (x32 - x31).powi(2) + (y32 - y31).powi(2) - 5.0,
            rod33: (x33 - x32).powi(2) + (y33 - y32).powi(2) - 5.0,
            rod34: (x34 - x33).powi(2) + (y34 - y33).powi(2) - 5.0,
            rod35: (x35 - x34).powi(2) + (y35 - y34).powi(2) - 5.0,
            rod36: (x36 - x35).powi(2) + (y36 - y35).powi(2) - 5.0,
            rod37: (x37 - x36).powi(2) + (y37 - y36).powi(2) - 5.0,
            rod38: (x38 - x37).powi(2) + (y38 - y37).powi(2) - 5.0,
            rod39: (x39 - x38).powi(2) + (y39 - y38).powi(2) - 5.0,
            rod40: (x40 - x39).powi(2) + (y40 - y39).powi(2) - 5.0,
            rod41: (x41 - x40).powi(2) + (y41 - y40).powi(2) - 5.0,
            rod42: (x42 - x41).powi(2) + (y42 - y41).powi(2) - 5.0,
            rod43: (x43 - x42).powi(2) + (y43 - y42).powi(2) - 5.0,
            rod44: (x44 - x43).powi(2) + (y44 - y43).powi(2) - 5.0,
            rod45: (x45 - x44).powi(2) + (y45 - y44).powi(2) - 5.0,
            rod46: (x46 - x45).powi(2) + (y46 - y45).powi(2) - 5.0,
            rod47: (x47 - x46).powi(2) + (y47 - y46).powi(2) - 5.0,
            rod48: (x48 - x47).powi(2) + (y48 - y47).powi(2) - 5.0,
            rod49: (x49 - x48).powi(2) + (y49 - y48).powi(2) - 5.0,
            rod50: (x50 - x49).powi(2) + (y50 - y49).powi(2) - 5.0,
        },
        integrators: [zss],
    }
}
