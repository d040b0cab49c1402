//! The fault suite's randomness: SplitMix64, small and deterministic, so a
//! seed names one schedule on every machine and in every later build (as
//! long as the drawing code does not change). No `rand` crate: the suite
//! needs nothing but reproducible numbers.

/// A SplitMix64 generator (Steele, Lea and Flood, 2014): one `u64` of state,
/// every output a bijective mix of it.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    state: u64,
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0). The modulo bias is below
    /// 2^-40 for the small ranges drawn here.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// A number in `low..=high`.
    pub(crate) fn between(&mut self, low: u64, high: u64) -> u64 {
        if high <= low { low } else { low + self.below(high - low + 1) }
    }

    /// True `percent` times in a hundred.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// An index into `weights`, each drawn in proportion to its weight.
    pub(crate) fn weighted(&mut self, weights: &[u64]) -> usize {
        let total: u64 = weights.iter().sum();
        let mut left = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if left < *w {
                return i;
            }
            left -= w;
        }
        0
    }
}

/// A seed derived from `seed` and `salt`: the same pair always gives the
/// same value, and neighbouring salts give unrelated ones.
pub(crate) fn derive(seed: u64, salt: u64) -> u64 {
    Rng::new(seed ^ salt.wrapping_mul(GOLDEN).rotate_left(17)).next_u64()
}

/// A stable 64-bit hash of text (FNV-1a), to key draws on strings.
pub(crate) fn hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_numbers() {
        let a: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        let mut other = Rng::new(43);
        assert_ne!(a[0], other.next_u64());
    }

    #[test]
    fn splitmix64_matches_its_reference_output() {
        // The reference implementation's first outputs for seed 1234567.
        let mut r = Rng::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn ranges_stay_in_bounds_and_weights_are_respected() {
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            let n = r.between(3, 5);
            assert!((3..=5).contains(&n), "{n}");
            assert!(r.below(4) < 4);
        }
        assert_eq!(r.between(9, 9), 9);
        assert_eq!(r.below(0), 0);
        let mut counts = [0u32; 3];
        for _ in 0..3000 {
            counts[r.weighted(&[1, 0, 2])] += 1;
        }
        assert_eq!(counts[1], 0, "{counts:?}");
        assert!(counts[2] > counts[0], "{counts:?}");
    }

    #[test]
    fn derived_seeds_differ_by_salt_and_repeat_by_pair() {
        assert_eq!(derive(1, 2), derive(1, 2));
        assert_ne!(derive(1, 2), derive(1, 3));
        assert_ne!(derive(1, 2), derive(2, 2));
        assert_eq!(hash("a"), hash("a"));
        assert_ne!(hash("a"), hash("b"));
    }
}
