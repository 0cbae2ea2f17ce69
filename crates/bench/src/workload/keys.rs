//! Key-number distributions: sequential, uniform, gaussian and zipfian (rejection-inversion, any
//! exponent > 0), each drawing from a caller-owned seeded RNG so runs are reproducible.

use fastrand::Rng;

/// How key numbers are drawn from `[min, max]`.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyDist {
    /// Counts up from `min`, wraps after `max` (memtier `S`, and `P` over a client's slice).
    Sequential,
    /// Uniform random (memtier `R`).
    Uniform,
    /// Normal with the given median and standard deviation, redrawn until inside the range
    /// (memtier `G`).
    Gaussian {
        /// Centre of the distribution.
        median: f64,
        /// Standard deviation.
        stddev: f64,
    },
    /// Zipf with exponent `s` over ranks 1..=n, rank 1 mapped to `min` (memtier `Z`).
    Zipf(Zipf),
}

/// A key generator: a distribution over a range plus the state of the sequential pattern.
#[derive(Clone, Debug)]
pub struct KeyGen {
    /// Lowest key number.
    pub min: u64,
    /// Highest key number (inclusive).
    pub max: u64,
    /// The distribution.
    pub dist: KeyDist,
    next_seq: u64,
}

impl KeyGen {
    /// A generator over `[min, max]` (swapped if reversed).
    pub fn new(min: u64, max: u64, dist: KeyDist) -> Self {
        let (min, max) = if min <= max { (min, max) } else { (max, min) };
        KeyGen { min, max, dist, next_seq: min }
    }

    /// The next key number.
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match &self.dist {
            KeyDist::Sequential => {
                let k = self.next_seq;
                self.next_seq = if k >= self.max { self.min } else { k + 1 };
                k
            }
            KeyDist::Uniform => rng.u64(self.min..=self.max),
            KeyDist::Gaussian { median, stddev } => {
                for _ in 0..64 {
                    let x = median + stddev * standard_normal(rng);
                    let k = x.round();
                    if k >= self.min as f64 && k <= self.max as f64 {
                        return k as u64;
                    }
                }
                (*median as u64).clamp(self.min, self.max)
            }
            KeyDist::Zipf(z) => self.min + z.sample(rng) - 1,
        }
    }
}

/// A standard normal deviate (Box-Muller).
pub fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.f64(); // (0, 1]
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Zipf sampler over ranks `1..=n` with exponent `s > 0` by rejection-inversion
/// (Hörmann and Derflinger, 1996): constant time per draw, no table.
#[derive(Clone, Debug, PartialEq)]
pub struct Zipf {
    n: u64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    /// A sampler over `1..=n` (n >= 1) with exponent `s` (> 0).
    pub fn new(n: u64, s: f64) -> Self {
        let n = n.max(1);
        let mut z = Zipf { n, s, h_x1: 0.0, h_n: 0.0, cut: 0.0 };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.cut = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.s) * lx) * lx
    }
    fn big_h_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (log1p_over_x(t) * x).exp()
    }
    /// One rank in `1..=n`.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.f64() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n as f64);
            if k - x <= self.cut || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(g: &mut KeyGen, n: usize) -> Vec<u64> {
        let mut rng = Rng::with_seed(42);
        (0..n).map(|_| g.next(&mut rng)).collect()
    }

    fn mean_sd(v: &[u64]) -> (f64, f64) {
        let m = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / v.len() as f64;
        (m, var.sqrt())
    }

    #[test]
    fn sequential_wraps() {
        let mut g = KeyGen::new(5, 7, KeyDist::Sequential);
        assert_eq!(draw(&mut g, 7), vec![5, 6, 7, 5, 6, 7, 5]);
    }

    #[test]
    fn uniform_mean_and_spread() {
        let mut g = KeyGen::new(0, 9999, KeyDist::Uniform);
        let v = draw(&mut g, 200_000);
        let (m, sd) = mean_sd(&v);
        assert!((m - 4999.5).abs() < 30.0, "{m}");
        // sd of a discrete uniform over 10000 values = 2886.75
        assert!((sd - 2886.75).abs() < 20.0, "{sd}");
        assert!(v.iter().all(|&k| k <= 9999));
        // every decile gets ~10%
        let mut dec = [0usize; 10];
        v.iter().for_each(|&k| dec[(k / 1000) as usize] += 1);
        assert!(dec.iter().all(|&d| (19_000..21_000).contains(&d)), "{dec:?}");
    }

    #[test]
    fn gaussian_mean_and_stddev() {
        let mut g = KeyGen::new(0, 1_000_000, KeyDist::Gaussian { median: 500_000.0, stddev: 1000.0 });
        let v = draw(&mut g, 100_000);
        let (m, sd) = mean_sd(&v);
        assert!((m - 500_000.0).abs() < 20.0, "{m}");
        assert!((sd - 1000.0).abs() < 15.0, "{sd}");
        // ~68.3% within one sd
        let within = v.iter().filter(|&&k| (k as f64 - 500_000.0).abs() <= 1000.0).count();
        let share = within as f64 / v.len() as f64;
        assert!((share - 0.683).abs() < 0.01, "{share}");
    }

    #[test]
    fn zipf_rank_frequencies() {
        // s = 1, n = 1000: P(rank 1) = 1/H(1000) = 0.13361, P(rank 2) = half of that.
        let mut g = KeyGen::new(1, 1000, KeyDist::Zipf(Zipf::new(1000, 1.0)));
        let v = draw(&mut g, 200_000);
        let p1 = v.iter().filter(|&&k| k == 1).count() as f64 / v.len() as f64;
        let p2 = v.iter().filter(|&&k| k == 2).count() as f64 / v.len() as f64;
        assert!((p1 - 0.13361).abs() < 0.004, "{p1}");
        assert!((p2 - 0.06680).abs() < 0.003, "{p2}");
        assert!(v.iter().all(|&k| (1..=1000).contains(&k)));
    }

    #[test]
    fn zipf_other_exponents_in_range() {
        for s in [0.5, 0.99, 2.0] {
            let z = Zipf::new(50, s);
            let mut rng = Rng::with_seed(7);
            let mut counts = [0u32; 51];
            for _ in 0..50_000 {
                counts[z.sample(&mut rng) as usize] += 1;
            }
            assert_eq!(counts[0], 0);
            // monotone-ish: rank 1 beats rank 10 beats rank 50
            assert!(counts[1] > counts[10] && counts[10] > counts[50], "{s} {counts:?}");
            // P(1)/P(2) = 2^s
            let ratio = counts[1] as f64 / counts[2] as f64;
            assert!((ratio - 2f64.powf(s)).abs() / 2f64.powf(s) < 0.08, "{s} {ratio}");
        }
    }
}
