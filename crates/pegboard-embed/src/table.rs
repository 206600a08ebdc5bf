//! The token-vector table as `build/distill.py` writes it (`data/vectors.bin`): the magic
//! `PBEMB001`, the row count and dimensions (u32 little-endian), one f32 scale a row, then the
//! rows as int8 (a value is `scale * q`). A row of scale 0 is a token without a vector.

use crate::EmbedError;

const MAGIC: &[u8; 8] = b"PBEMB001";
const HEADER: usize = 16;

/// The decoded table: scales owned, int8 rows borrowed from the embedded bytes.
pub(crate) struct Table<'a> {
    pub(crate) dims: usize,
    scales: Vec<f32>,
    rows: &'a [u8],
}

impl<'a> Table<'a> {
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, EmbedError> {
        let bad = |what: &str| EmbedError::Table(what.to_string());
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err(bad("it does not start with PBEMB001"));
        }
        let word = |at: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&bytes[at..at + 4]);
            u32::from_le_bytes(b) as usize
        };
        let (rows, dims) = (word(8), word(12));
        let scales_end = rows
            .checked_mul(4)
            .and_then(|n| n.checked_add(HEADER))
            .ok_or_else(|| bad("its row count overflows"))?;
        let end = rows
            .checked_mul(dims)
            .and_then(|n| n.checked_add(scales_end))
            .ok_or_else(|| bad("its size overflows"))?;
        if dims == 0 || bytes.len() != end {
            return Err(bad(&format!(
                "{} bytes, not the {end} that {rows} rows of {dims} dimensions take",
                bytes.len()
            )));
        }
        let scales = bytes[HEADER..scales_end]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect::<Vec<_>>();
        if scales.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return Err(bad("a row scale is negative or not finite"));
        }
        Ok(Self {
            dims,
            scales,
            rows: &bytes[scales_end..],
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.scales.len()
    }

    /// Adds row `id` to `sum`; false when the token has no vector (or no such row).
    pub(crate) fn add_row(&self, id: u32, sum: &mut [f32]) -> bool {
        let id = id as usize;
        let Some(&scale) = self.scales.get(id) else {
            return false;
        };
        if scale == 0.0 {
            return false;
        }
        let row = &self.rows[id * self.dims..(id + 1) * self.dims];
        for (s, &q) in sum.iter_mut().zip(row) {
            *s += scale * f32::from(q as i8);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: u32, dims: u32, scales: &[f32], q: &[i8]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend(rows.to_le_bytes());
        b.extend(dims.to_le_bytes());
        for s in scales {
            b.extend(s.to_le_bytes());
        }
        b.extend(q.iter().map(|&v| v as u8));
        b
    }

    #[test]
    fn rows_are_scaled() {
        let bytes = table(2, 2, &[0.5, 0.0], &[2, -4, 1, 1]);
        let t = Table::parse(&bytes).expect("valid");
        let mut sum = [0.0; 2];
        assert!(t.add_row(0, &mut sum));
        assert!(!t.add_row(1, &mut sum), "scale 0: no vector");
        assert!(!t.add_row(7, &mut sum), "no such row");
        assert_eq!(sum, [1.0, -2.0]);
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(Table::parse(b"nonsense").is_err());
        let short = table(2, 2, &[0.5, 0.5], &[1, 1, 1]);
        assert!(Table::parse(&short).is_err());
        let negative = table(1, 1, &[-1.0], &[1]);
        assert!(Table::parse(&negative).is_err());
        let huge = table(u32::MAX, u32::MAX, &[], &[]);
        assert!(Table::parse(&huge).is_err());
    }
}
