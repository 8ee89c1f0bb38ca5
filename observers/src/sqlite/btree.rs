//! Just enough of SQLite's b-tree page format to say which table a page
//! belongs to and which rows live on it.
//!
//! Rows are never decoded here (SQLite reads them, so digests are exactly
//! those of a full read); this only finds, for a changed page, the table
//! and the rowid range to ask SQLite about: a table b-tree's leaf cells start
//! with the payload size and the rowid, its interior cells hold child page
//! numbers, and a row too large for its leaf continues on a chain of
//! overflow pages. Anything that does not parse as expected is
//! [`Malformed`], and the observer then reads the whole store instead.

use std::collections::HashMap;

use super::image::Images;

/// A page that does not parse as the b-tree page it should be.
#[derive(Debug)]
pub(crate) struct Malformed;

/// What one page is to the tables the observer reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Owner {
    /// The table's slot plus one; 0 for a page no observed table owns.
    pub slot: u32,
    pub leaf: bool,
}

/// Page → owner, for every interior and leaf page of the walked tables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PageMap {
    pub owners: Vec<Owner>,
}

impl PageMap {
    pub fn get(&self, page: u32) -> Owner {
        self.owners.get(page as usize).copied().unwrap_or_default()
    }

    fn set(&mut self, page: u32, owner: Owner) -> Result<(), Malformed> {
        let index = page as usize;
        if self.owners.len() <= index {
            self.owners.resize(index + 1, Owner::default());
        }
        if self.owners[index].slot != 0 {
            // A page reached twice: a cycle or a shared page, never SQLite's.
            return Err(Malformed);
        }
        self.owners[index] = owner;
        Ok(())
    }
}

/// Overflow page → the row whose payload continues there.
pub(crate) type OverflowMap = HashMap<u32, (u32, i64)>;

/// A table b-tree leaf cell: the row's key and where its payload spills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeafCell {
    pub rowid: i64,
    pub overflow: Option<(u32, u64)>,
}

/// A parsed b-tree page.
pub(crate) struct Node {
    pub leaf: bool,
    pub table: bool,
    pub children: Vec<u32>,
    cells: Vec<usize>,
}

/// Reads a varint (1–9 bytes, big-endian, 7 bits per byte but the ninth).
fn varint(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for i in 0..9 {
        let b = *bytes.get(at + i)?;
        if i == 8 {
            return Some(((value << 8) | u64::from(b), 9));
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

fn be16(bytes: &[u8], at: usize) -> Option<usize> {
    Some(usize::from(u16::from_be_bytes([
        *bytes.get(at)?,
        *bytes.get(at + 1)?,
    ])))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *bytes.get(at)?,
        *bytes.get(at + 1)?,
        *bytes.get(at + 2)?,
        *bytes.get(at + 3)?,
    ]))
}

/// Parses page `page` (its header starts after the file header on page 1).
pub(crate) fn parse(data: &[u8], page: u32) -> Result<Node, Malformed> {
    let at = if page == 1 { 100 } else { 0 };
    let flag = *data.get(at).ok_or(Malformed)?;
    let (leaf, table) = match flag {
        0x0d => (true, true),
        0x05 => (false, true),
        0x0a => (true, false),
        0x02 => (false, false),
        _ => return Err(Malformed),
    };
    let count = be16(data, at + 3).ok_or(Malformed)?;
    let header = if leaf { 8 } else { 12 };
    let mut cells = Vec::with_capacity(count);
    for i in 0..count {
        let offset = be16(data, at + header + 2 * i).ok_or(Malformed)?;
        if offset >= data.len() {
            return Err(Malformed);
        }
        cells.push(offset);
    }
    let mut children = Vec::new();
    if !leaf {
        for &cell in &cells {
            children.push(be32(data, cell).ok_or(Malformed)?);
        }
        children.push(be32(data, at + 8).ok_or(Malformed)?);
    }
    Ok(Node {
        leaf,
        table,
        children,
        cells,
    })
}

/// The local part of a payload of `size` bytes on a page of `usable` bytes
/// (SQLite's rule; `table` leaves keep more of it than index pages).
fn local_size(size: u64, usable: u64, table: bool) -> u64 {
    let max = if table {
        usable - 35
    } else {
        (usable - 12) * 64 / 255 - 23
    };
    if size <= max {
        return size;
    }
    let min = (usable - 12) * 32 / 255 - 23;
    let k = min + (size - min) % (usable - 4);
    if k <= max { k } else { min }
}

/// The cells of a table leaf.
pub(crate) fn leaf_cells(
    node: &Node,
    data: &[u8],
    usable: u64,
) -> Result<Vec<LeafCell>, Malformed> {
    let mut out = Vec::with_capacity(node.cells.len());
    for &cell in &node.cells {
        let (size, n) = varint(data, cell).ok_or(Malformed)?;
        let (rowid, m) = varint(data, cell + n).ok_or(Malformed)?;
        let local = local_size(size, usable, true);
        let overflow = if local < size {
            let at = cell + n + m + local as usize;
            Some((be32(data, at).ok_or(Malformed)?, size - local))
        } else {
            None
        };
        out.push(LeafCell {
            rowid: rowid as i64,
            overflow,
        });
    }
    Ok(out)
}

/// The overflow chains of an index-format page's cells (a WITHOUT ROWID
/// table's rows): first page and bytes left, per spilling cell.
pub(crate) fn index_overflows(
    node: &Node,
    data: &[u8],
    usable: u64,
) -> Result<Vec<(u32, u64)>, Malformed> {
    let mut out = Vec::new();
    for &cell in &node.cells {
        let start = if node.leaf { cell } else { cell + 4 };
        let (size, n) = varint(data, start).ok_or(Malformed)?;
        let local = local_size(size, usable, false);
        if local < size {
            let at = start + n + local as usize;
            out.push((be32(data, at).ok_or(Malformed)?, size - local));
        }
    }
    Ok(out)
}

/// Walks one b-tree from `root` in the current (or previous) image,
/// recording every interior and leaf page as `slot`'s. With `overflow`,
/// leaves are read too, and the overflow chains of their rows recorded.
#[allow(clippy::too_many_arguments)]
pub(crate) fn walk(
    images: &Images,
    current: bool,
    root: u32,
    slot: u32,
    usable: u64,
    map: &mut PageMap,
    overflow: Option<&mut OverflowMap>,
) -> Result<(), Malformed> {
    let mut overflow = overflow;
    let mut stack = vec![(root, 0u32)];
    let mut buffer = Vec::new();
    while let Some((page, depth)) = stack.pop() {
        if depth > 40
            || !images
                .page(current, page, &mut buffer)
                .map_err(|_| Malformed)?
        {
            return Err(Malformed);
        }
        let node = parse(&buffer, page)?;
        map.set(
            page,
            Owner {
                slot: slot + 1,
                leaf: node.leaf,
            },
        )?;
        if node.leaf {
            if let Some(chains) = overflow.as_deref_mut() {
                record_chains(images, current, &node, &buffer, usable, slot, chains)?;
            }
        } else {
            stack.extend(node.children.iter().map(|&c| (c, depth + 1)));
        }
    }
    Ok(())
}

/// Records the overflow pages of a leaf's rows as theirs.
pub(crate) fn record_chains(
    images: &Images,
    current: bool,
    node: &Node,
    data: &[u8],
    usable: u64,
    slot: u32,
    chains: &mut OverflowMap,
) -> Result<(), Malformed> {
    let starts: Vec<(i64, u32, u64)> = if node.table {
        leaf_cells(node, data, usable)?
            .into_iter()
            .filter_map(|c| c.overflow.map(|(p, left)| (c.rowid, p, left)))
            .collect()
    } else {
        index_overflows(node, data, usable)?
            .into_iter()
            .map(|(p, left)| (i64::MIN, p, left))
            .collect()
    };
    let mut buffer = Vec::new();
    for (rowid, mut page, mut left) in starts {
        while page != 0 && left > 0 {
            chains.insert(page, (slot, rowid));
            if !images
                .page(current, page, &mut buffer)
                .map_err(|_| Malformed)?
            {
                return Err(Malformed);
            }
            left = left.saturating_sub(usable - 4);
            page = be32(&buffer, 0).ok_or(Malformed)?;
        }
    }
    Ok(())
}

/// The first and last rowid of a table leaf, if it holds any row.
pub(crate) fn leaf_range(
    data: &[u8],
    page: u32,
    usable: u64,
) -> Result<Option<(i64, i64)>, Malformed> {
    let node = parse(data, page)?;
    if !node.leaf || !node.table {
        return Ok(None);
    }
    let cells = leaf_cells(&node, data, usable)?;
    Ok(match (cells.first(), cells.last()) {
        (Some(a), Some(b)) => Some((a.rowid.min(b.rowid), a.rowid.max(b.rowid))),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        assert_eq!(varint(&[0x05], 0), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9], 0), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81], 0), None);
    }

    #[test]
    fn local_payload_follows_the_file_format() {
        // 4096-byte pages: a table leaf keeps up to 4061 bytes locally.
        assert_eq!(local_size(4061, 4096, true), 4061);
        // Past that, the rule keeps min + (size - min) % (usable - 4) when it
        // fits, else the minimum, 489.
        assert_eq!(local_size(4062, 4096, true), 489);
        assert_eq!(local_size(10_000, 4096, true), 1816);
    }
}
