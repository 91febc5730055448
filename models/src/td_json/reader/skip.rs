//! Skipping a member the model does not have, of any shape, checked as strictly as serde_json
//! checks it.

use super::{JsonError, JsonReader};

impl<'a> JsonReader<'a> {
    /// Skips one value of any shape (an unknown field), checking it as strictly as a read would:
    /// an unknown array or object is skipped to its own end, never to the enclosing one's.
    pub fn skip_value(&mut self) -> Result<(), JsonError> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'"') => {
                let token = self.scan_string()?;
                // Its escapes were checked by the scan: only the literal bytes are left.
                self.checked_raw(&token).map(|_| ())
            }
            Some(b'{') => {
                self.begin_object()?;
                while self.next_member()?.is_some() {
                    self.name()?;
                    self.expect(b':', "`:`")?;
                    self.skip_value()?;
                }
                Ok(())
            }
            Some(b'[') => {
                if !self.begin_array()? {
                    loop {
                        self.skip_value()?;
                        if self.end_of_element()? {
                            break;
                        }
                    }
                }
                Ok(())
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => {
                let token = self.number_token("a value")?;
                // serde_json refuses a number it cannot hold as a finite double.
                if token.magnitude.is_none() {
                    self.parse_float(&token)?;
                }
                Ok(())
            }
            _ => Err(self.unexpected("a value")),
        }
    }
}
