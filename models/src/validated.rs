//! The `validated clone` floor's runtime: a deep clone that checks every string as UTF-8 while
//! copying it, as a decoder of untrusted bytes must before it may hand out a `String`. The
//! generated impls walk the fields; these are the leaves.

/// A deep copy that re-validates every string on the way.
pub trait ValidatedClone {
    fn validated_clone(&self) -> Self;
}

impl<T: ValidatedClone> ValidatedClone for Option<T> {
    fn validated_clone(&self) -> Self {
        self.as_ref().map(T::validated_clone)
    }
}

impl<T: ValidatedClone> ValidatedClone for Box<T> {
    fn validated_clone(&self) -> Self {
        Box::new(T::validated_clone(self))
    }
}

/// A string copied from bytes checked as UTF-8, as a decoder builds one from its input. (A
/// `String` is UTF-8 already: the check is the cost being measured, and it cannot fail.)
#[inline]
pub fn string(text: &str) -> String {
    match crate::utf8::check(text.as_bytes()) {
        Ok(checked) => checked.to_owned(),
        Err(_) => unreachable!("a String holds UTF-8"),
    }
}

/// Bytes are copied unchecked.
#[inline]
pub fn bytes(data: &[u8]) -> Vec<u8> {
    data.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_equal_and_owned() {
        let text = "naïve 日本 😀".to_string();
        let copy = string(&text);
        assert_eq!(copy, text);
        assert_ne!(copy.as_ptr(), text.as_ptr());
        assert_eq!(bytes(&[0, 255]), vec![0, 255]);
        assert_eq!(Some(Box::new(3u8)).map(|b| *b), Some(3));
    }
}
