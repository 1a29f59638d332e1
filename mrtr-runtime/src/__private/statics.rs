//! The `&'static str` values of `const`/`static` items a tool body names, added to the
//! strings its state may hold (see `decode_state`): `let env = ENVS[i];` kept across a
//! suspension decodes again, pointing into `ENVS`'s strings as before.

/// A value that may hold `&'static str`s: each of them.
pub trait StaticStrs {
    fn static_strs(&self, out: &mut Vec<&'static str>);
}

impl StaticStrs for &'static str {
    fn static_strs(&self, out: &mut Vec<&'static str>) {
        out.push(self);
    }
}

impl<T: StaticStrs> StaticStrs for [T] {
    fn static_strs(&self, out: &mut Vec<&'static str>) {
        for item in self {
            item.static_strs(out);
        }
    }
}

impl<T: StaticStrs, const N: usize> StaticStrs for [T; N] {
    fn static_strs(&self, out: &mut Vec<&'static str>) {
        self.as_slice().static_strs(out);
    }
}

impl<T: StaticStrs> StaticStrs for &'static [T] {
    fn static_strs(&self, out: &mut Vec<&'static str>) {
        (**self).static_strs(out);
    }
}

impl<T: StaticStrs> StaticStrs for Option<T> {
    fn static_strs(&self, out: &mut Vec<&'static str>) {
        if let Some(value) = self {
            value.static_strs(out);
        }
    }
}

macro_rules! no_strs {
    ($($ty:ty),*) => {$(
        impl StaticStrs for $ty {
            fn static_strs(&self, _: &mut Vec<&'static str>) {}
        }
    )*};
}
no_strs!(
    bool, char, u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);

macro_rules! tuple_strs {
    ($(($($name:ident),+))*) => {$(
        impl<$($name: StaticStrs),+> StaticStrs for ($($name,)+) {
            #[allow(non_snake_case)]
            fn static_strs(&self, out: &mut Vec<&'static str>) {
                let ($($name,)+) = self;
                $($name.static_strs(out);)+
            }
        }
    )*};
}
tuple_strs!((A)(A, B)(A, B, C)(A, B, C, D));

/// A named item's value, probed for strings: [`ViaStrs`] when its type is [`StaticStrs`],
/// else [`ViaNothing`] (autoref specialization: the call `(&StrProbe(&ITEM)).probe_strs(..)`
/// picks the first that applies).
pub struct StrProbe<'a, T: ?Sized>(pub &'a T);

pub trait ViaStrs {
    fn probe_strs(&self, out: &mut Vec<&'static str>);
}

impl<T: StaticStrs + ?Sized> ViaStrs for StrProbe<'_, T> {
    fn probe_strs(&self, out: &mut Vec<&'static str>) {
        self.0.static_strs(out);
    }
}

pub trait ViaNothing {
    fn probe_strs(&self, out: &mut Vec<&'static str>);
}

impl<T: ?Sized> ViaNothing for &StrProbe<'_, T> {
    fn probe_strs(&self, _: &mut Vec<&'static str>) {}
}

/// The body's literals and the named items' strings, sorted and deduplicated, as
/// `decode_state` takes them.
pub fn literal_table(mut strs: Vec<&'static str>) -> Vec<&'static str> {
    strs.sort_unstable();
    strs.dedup();
    strs
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENVS: [&str; 2] = ["staging", "prod"];
    static PAIRS: &[(&str, u32)] = &[("a", 1), ("b", 2)];
    const MAX: u32 = 3;
    struct Opaque;
    const OPAQUE: Opaque = Opaque;

    #[test]
    // The borrow is what picks `ViaNothing` for a type without strings (as generated).
    #[allow(clippy::needless_borrow)]
    fn strings_of_named_items_are_collected_and_other_types_add_nothing() {
        let mut out = vec!["z", "prod"];
        (&StrProbe(&ENVS)).probe_strs(&mut out);
        (&StrProbe(&PAIRS)).probe_strs(&mut out);
        (&StrProbe(&MAX)).probe_strs(&mut out);
        (&StrProbe(&OPAQUE)).probe_strs(&mut out);
        assert_eq!(literal_table(out), ["a", "b", "prod", "staging", "z"]);
    }
}
