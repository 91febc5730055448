//! Binary TL against byte expectations written out by hand from the TL rules, not from our writer.

use tdbench::Codec;
use tdbench::codecs::tl::Tl;
use tdbench::models::*;

fn encode(value: Object) -> Vec<u8> {
    let mut out = Vec::new();
    Tl.encode(&value, &mut out).unwrap();
    assert_eq!(Tl.decode(&out).unwrap(), value, "round trip");
    out
}

#[test]
fn constructor_ids_are_tdlibs() {
    assert_eq!(Ok::CONSTRUCTOR_ID as i32, -722616727);
    assert_eq!(Error::CONSTRUCTOR_ID as i32, -1679978726);
    assert_eq!(TestString::CONSTRUCTOR_ID as i32, -27891572);
    assert!(CONSTRUCTORS.iter().any(|&(name, id)| name == "updateUserStatus" && id == UpdateUserStatus::CONSTRUCTOR_ID));
}

#[test]
fn an_empty_object_is_its_id() {
    assert_eq!(encode(Object::Ok(Ok {})), [0x69, 0xbe, 0xed, 0xd4]);
}

#[test]
fn a_string_object() {
    let bytes = encode(Object::TestString(TestString { value: "hello".into() }));
    assert_eq!(bytes, [0x8c, 0x68, 0x56, 0xfe, 5, b'h', b'e', b'l', b'l', b'o', 0, 0]);
}

#[test]
fn a_null_pointer_is_null_56730bcc() {
    let id = UpdateUserStatus::CONSTRUCTOR_ID.to_le_bytes();
    let bytes = encode(Object::UpdateUserStatus(UpdateUserStatus { user_id: 1, status: None }));
    let mut expected = id.to_vec();
    expected.extend([1, 0, 0, 0, 0, 0, 0, 0]);
    expected.extend([0xcc, 0x0b, 0x73, 0x56]);
    assert_eq!(bytes, expected);
}

#[test]
fn a_nested_object_and_a_bool() {
    let value = Object::UpdateUserStatus(UpdateUserStatus {
        user_id: -2,
        status: Some(UserStatus::Recently(UserStatusRecently { by_my_privacy_settings: true })),
    });
    let mut expected = UpdateUserStatus::CONSTRUCTOR_ID.to_le_bytes().to_vec();
    expected.extend([0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    expected.extend(UserStatusRecently::CONSTRUCTOR_ID.to_le_bytes());
    expected.extend([0xb5, 0x75, 0x72, 0x99]);
    assert_eq!(encode(value), expected);
}

#[test]
fn vectors_of_ints_and_of_objects() {
    let mut expected = TestVectorInt::CONSTRUCTOR_ID.to_le_bytes().to_vec();
    expected.extend([0x15, 0xc4, 0xb5, 0x1c, 2, 0, 0, 0, 7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(encode(Object::TestVectorInt(TestVectorInt { value: vec![7, -1] })), expected);

    let mut expected = TestVectorIntObject::CONSTRUCTOR_ID.to_le_bytes().to_vec();
    expected.extend([0x15, 0xc4, 0xb5, 0x1c, 1, 0, 0, 0]);
    expected.extend(TestInt::CONSTRUCTOR_ID.to_le_bytes());
    expected.extend([3, 0, 0, 0]);
    assert_eq!(encode(Object::TestVectorIntObject(TestVectorIntObject { value: vec![TestInt { value: 3 }] })), expected);
}

/// A sub-object of fixed-width fields is put into its parent's stretch (`write_in`); any other
/// constructor of the same abstract type is written as a call of its own. Both, and `null`,
/// in one vector.
#[test]
fn fixed_width_sub_objects_and_others_of_the_same_type() {
    let entity = |offset: i32, length: i32, r#type: Option<TextEntityType>| TextEntity { offset, length, r#type };
    let value = Object::FormattedText(FormattedText {
        text: "ab".into(),
        entities: vec![
            entity(0, 1, Some(TextEntityType::Bold(TextEntityTypeBold {}))),
            entity(1, 1, Some(TextEntityType::MentionName(TextEntityTypeMentionName { user_id: 7 }))),
            entity(0, 2, Some(TextEntityType::TextUrl(TextEntityTypeTextUrl { url: "x".into() }))),
            entity(0, 0, None),
        ],
    });
    let mut expected = FormattedText::CONSTRUCTOR_ID.to_le_bytes().to_vec();
    expected.extend([2, b'a', b'b', 0]);
    expected.extend([0x15, 0xc4, 0xb5, 0x1c, 4, 0, 0, 0]);
    let entity_head = |offset: u8, length: u8| {
        let mut head = TextEntity::CONSTRUCTOR_ID.to_le_bytes().to_vec();
        head.extend([offset, 0, 0, 0, length, 0, 0, 0]);
        head
    };
    expected.extend(entity_head(0, 1));
    expected.extend(TextEntityTypeBold::CONSTRUCTOR_ID.to_le_bytes());
    expected.extend(entity_head(1, 1));
    expected.extend(TextEntityTypeMentionName::CONSTRUCTOR_ID.to_le_bytes());
    expected.extend([7, 0, 0, 0, 0, 0, 0, 0]);
    expected.extend(entity_head(0, 2));
    expected.extend(TextEntityTypeTextUrl::CONSTRUCTOR_ID.to_le_bytes());
    expected.extend([1, b'x', 0, 0]);
    expected.extend(entity_head(0, 0));
    expected.extend([0xcc, 0x0b, 0x73, 0x56]);
    assert_eq!(encode(value), expected);
}

#[test]
fn bytes_use_the_long_form_from_254() {
    let bytes = encode(Object::TestBytes(TestBytes { value: vec![0xab; 300] }));
    assert_eq!(bytes[4..8], [0xfe, 0x2c, 0x01, 0x00]);
    assert_eq!(bytes.len(), 4 + 4 + 300);
}

#[test]
fn doubles_are_ieee_little_endian() {
    let value = Object::MessageSendingStateFailed(MessageSendingStateFailed { retry_after: 1.5, ..Default::default() });
    let bytes = encode(value);
    assert_eq!(bytes[bytes.len() - 8..], [0, 0, 0, 0, 0, 0, 0xf8, 0x3f]);
}

#[test]
fn decoding_names_what_is_wrong() {
    let err = Tl.decode(&[1, 2, 3, 4]).unwrap_err();
    assert_eq!(err.offset, Some(4));
    assert!(err.message.contains("0x04030201 is not a Object"), "{err}");
    let mut trailing = encode(Object::Ok(Ok {}));
    trailing.push(0);
    assert!(Tl.decode(&trailing).unwrap_err().message.contains("1 bytes left"));
}

#[test]
fn absent_types_are_refused_by_name() {
    // messageText with a linkPreview object: the type is outside the schema.
    let mut bytes = MessageText::CONSTRUCTOR_ID.to_le_bytes().to_vec();
    bytes.extend(tdbench::models::tl::NULL.to_le_bytes());
    bytes.extend(0x1234_5678u32.to_le_bytes());
    let err = Tl.decode(&bytes).unwrap_err();
    assert!(err.message.contains("`linkPreview` is outside tdbench's schema"), "{err}");
}
