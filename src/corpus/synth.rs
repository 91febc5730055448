//! The synthetic corpus: payloads with TDLib's shape and realistic values, from a fixed seed, so
//! `cargo run --release --bin gen-corpus` rewrites `corpus/synthetic*.jsonl` byte for byte.
//!
//! Values are built as models and written with the canonical TDLib JSON writer, except the
//! escape files, whose lines are typed out here by hand so the writer is checked against them
//! rather than the other way round.
//!
//! One file past 600 lines on purpose: it is one recipe, whose builders share the seeded [`Rng`]
//! and call one another in a fixed order; the order of the calls is the corpus's bytes, so
//! splitting it would scatter what must be read, and changed, as one.

use tdbench_models::*;

use crate::Codec;
use crate::codecs::json::Json;

/// Bump when the generator changes output on purpose (the committed corpus must be regenerated).
pub const SEED: u64 = 0x7d_b3_9c_01;

/// SplitMix64: tiny, fast and fully determined by its seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        low + (self.next_u64() % (high - low + 1) as u64) as i64
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next_u64() as usize % items.len()]
    }
}

/// One generated corpus file.
pub struct SyntheticFile {
    pub name: &'static str,
    pub lines: Vec<String>,
}

impl SyntheticFile {
    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}

/// Every synthetic file, in the order `gen-corpus` writes them.
pub fn generate() -> Vec<SyntheticFile> {
    let mut rng = Rng::new(SEED);
    let main = main_lines(&mut rng);
    let mix = mix_lines(&mut rng);
    let unknown = unknown_field_pairs(&mut rng).into_iter().map(|(with_unknown, _)| with_unknown).collect();
    vec![
        SyntheticFile { name: "synthetic.jsonl", lines: main },
        SyntheticFile { name: "synthetic-mix.jsonl", lines: mix },
        SyntheticFile { name: "synthetic-unknown.jsonl", lines: unknown },
        SyntheticFile { name: "synthetic-escapes.jsonl", lines: ESCAPES.iter().map(|s| s.to_string()).collect() },
        SyntheticFile { name: "synthetic-escapes-reader.jsonl", lines: ESCAPES_READER.iter().map(|(line, _)| line.to_string()).collect() },
    ]
}

/// Payloads carrying fields the models do not know, each with the canonical bytes it must
/// re-encode to (the same payload without them). Regenerated from the seed, so tests can check
/// every line of `synthetic-unknown.jsonl` against its exact expectation.
pub fn unknown_fields_expectations() -> Vec<(String, String)> {
    let mut rng = Rng::new(SEED);
    main_lines(&mut rng);
    mix_lines(&mut rng);
    unknown_field_pairs(&mut rng)
}

pub(super) fn write(value: Object) -> String {
    let mut out = Vec::new();
    Json.encode(&value, &mut out).expect("models always encode to JSON");
    String::from_utf8(out).expect("the TDLib writer emits ASCII")
}

fn main_lines(rng: &mut Rng) -> Vec<String> {
    let mut lines = Vec::new();
    for _ in 0..16 {
        lines.push(write(Object::UpdateUserStatus(user_status_update(rng))));
    }
    for _ in 0..8 {
        let downloaded = rng_bool(rng);
        lines.push(write(Object::UpdateFile(UpdateFile { file: Some(Box::new(file(rng, downloaded))) })));
    }
    for _ in 0..8 {
        let message = message(rng, MessageKind::Text { min_chars: 120, max_chars: 260 });
        lines.push(write(Object::UpdateNewMessage(UpdateNewMessage { message: Some(Box::new(message)) })));
    }
    for _ in 0..4 {
        lines.push(write(Object::Messages(messages_page(rng, 50))));
    }
    for _ in 0..8 {
        let (escaped, plain) = option_pair(rng);
        lines.push(write(Object::UpdateOption(escaped)));
        lines.push(write(Object::UpdateOption(plain)));
    }
    for _ in 0..8 {
        lines.push(write(Object::TestString(TestString { value: text_of_bytes(rng, 1024) })));
    }
    for _ in 0..4 {
        lines.push(write(Object::TestString(TestString { value: text_of_bytes(rng, 65_536) })));
    }
    for _ in 0..8 {
        lines.push(write(Object::TestBytes(TestBytes { value: random_bytes(rng, 1024) })));
    }
    for _ in 0..4 {
        lines.push(write(Object::TestBytes(TestBytes { value: random_bytes(rng, 65_536) })));
    }
    for _ in 0..4 {
        let value = (0..1000).map(|_| vector_int(rng)).collect();
        lines.push(write(Object::TestVectorInt(TestVectorInt { value })));
    }
    for _ in 0..4 {
        let value = (0..1000).map(|_| TestString { value: short_string(rng) }).collect();
        lines.push(write(Object::TestVectorStringObject(TestVectorStringObject { value })));
    }
    lines
}

/// What a client sees right after start-up: options, statuses, files and new messages
/// interleaved, with a history page now and then.
fn mix_lines(rng: &mut Rng) -> Vec<String> {
    let mut lines = Vec::new();
    for i in 0..48 {
        let value = match (i, rng.range(0, 9)) {
            (0..=5, _) => Object::UpdateOption(startup_option(rng, i)),
            (_, 0 | 1) => Object::UpdateUserStatus(user_status_update(rng)),
            (_, 2) => {
                let downloaded = rng_bool(rng);
                Object::UpdateFile(UpdateFile { file: Some(Box::new(file(rng, downloaded))) })
            }
            (_, 3) => Object::UpdateOption(startup_option(rng, i)),
            _ if i % 12 == 7 => Object::Messages(messages_page(rng, 4)),
            _ => {
                let kind = random_message_kind(rng);
                Object::UpdateNewMessage(UpdateNewMessage { message: Some(Box::new(message(rng, kind))) })
            }
        };
        lines.push(write(value));
    }
    lines
}

pub(super) fn rng_bool(rng: &mut Rng) -> bool {
    rng.chance(50)
}

pub(super) fn user_id(rng: &mut Rng) -> i64 {
    rng.range(100_000_000, 7_999_999_999)
}

fn supergroup_chat_id(rng: &mut Rng) -> i64 {
    -1_000_000_000_000 - rng.range(1_000_000_000, 2_999_999_999)
}

pub(super) fn unix_time(rng: &mut Rng) -> i32 {
    rng.range(1_760_000_000, 1_764_400_000) as i32
}

pub(super) fn user_status_update(rng: &mut Rng) -> UpdateUserStatus {
    let status = match rng.range(0, 9) {
        0..=3 => UserStatus::Offline(UserStatusOffline { was_online: unix_time(rng) }),
        4..=6 => UserStatus::Online(UserStatusOnline { expires: unix_time(rng) + 300 }),
        7 => UserStatus::Recently(UserStatusRecently { by_my_privacy_settings: rng_bool(rng) }),
        8 => UserStatus::LastWeek(UserStatusLastWeek { by_my_privacy_settings: false }),
        _ => UserStatus::Empty(UserStatusEmpty {}),
    };
    UpdateUserStatus { user_id: user_id(rng), status: Some(status) }
}

const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

pub(super) fn token(rng: &mut Rng, prefix: &str, len: usize) -> String {
    let mut s = String::from(prefix);
    while s.len() < len {
        s.push(*rng.pick(BASE64URL) as char);
    }
    s
}

const FILE_NAMES: &[(&str, &str)] = &[
    ("IMG_20261103_184512.jpg", "image/jpeg"),
    ("report_Q3_2026.pdf", "application/pdf"),
    ("Презентация проекта.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    ("voice_2026-11-28_09-14-03.ogg", "audio/ogg"),
    ("tdlib-1.8.66.tar.gz", "application/gzip"),
    ("会议记录.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("VID_20261127_120301.mp4", "video/mp4"),
];

pub(super) fn file(rng: &mut Rng, downloaded: bool) -> File {
    let size = rng.range(20_000, 48_000_000);
    let (name, _) = *rng.pick(FILE_NAMES);
    let path = if downloaded { format!("/home/user/tdlib/documents/{name}") } else { String::new() };
    let done = if downloaded { size } else { 0 };
    let remote_id_len = rng.range(40, 56) as usize;
    File {
        id: rng.range(1, 9000) as i32,
        size,
        expected_size: size,
        local: Some(LocalFile {
            can_be_deleted: downloaded,
            is_downloading_completed: downloaded,
            path,
            can_be_downloaded: true,
            is_downloading_active: false,
            download_offset: 0,
            downloaded_prefix_size: done,
            downloaded_size: done,
        }),
        remote: Some(RemoteFile {
            id: token(rng, "BQACAgIAAxkBAAI", remote_id_len),
            unique_id: token(rng, "AgAD", 16),
            is_uploading_active: false,
            is_uploading_completed: true,
            uploaded_size: size,
        }),
    }
}

/// Words of the text: mostly ASCII, as most chat text is, with other scripts and emoji (some
/// outside the BMP) mixed in.
const ASCII_WORDS: &[&str] = &[
    "the", "release", "notes", "are", "ready", "for", "review", "tomorrow", "morning", "please", "check", "build", "meeting", "moved",
    "to", "Friday", "ok", "and", "with", "new", "version", "2.0", "see", "you", "at", "lunch", "thanks", "I", "think", "we", "should",
    "ship", "it", "today", "after", "tests", "pass",
];
const OTHER_WORDS: &[&str] = &[
    "café",
    "naïve",
    "über",
    "señor",
    "привет",
    "встреча",
    "завтра",
    "в",
    "офисе",
    "документы",
    "готовы",
    "你好",
    "明天",
    "会议",
    "文件",
    "مرحبا",
    "غدا",
    "اجتماع",
    "שלום",
    "🙂",
    "🎉",
    "👍",
    "🔥",
    "❤️",
    "🚀",
    "—",
    "«",
    "»",
    "…",
];

enum Marked {
    Hashtag,
    Mention,
    Url,
    Email,
    BotCommand,
    CustomEmoji,
}

const MARKED: &[(&str, Marked)] = &[
    ("#release", Marked::Hashtag),
    ("#tdlib", Marked::Hashtag),
    ("@tdlib_bot", Marked::Mention),
    ("@durov", Marked::Mention),
    ("https://core.telegram.org/tdlib/docs", Marked::Url),
    ("https://t.me/tdlibchat/12345", Marked::Url),
    ("support@telegram.org", Marked::Email),
    ("/start", Marked::BotCommand),
    ("🦀", Marked::CustomEmoji),
];

/// A text of about `chars` characters, and the entities TDLib would attach (offsets and lengths
/// in UTF-16 code units, as TDLib counts them).
fn text(rng: &mut Rng, chars: usize) -> (String, Vec<TextEntity>) {
    let mut text = String::new();
    let mut utf16 = 0i32;
    let mut char_count = 0;
    let mut entities = Vec::new();
    while char_count < chars {
        if !text.is_empty() {
            text.push(if rng.chance(6) { '\n' } else { ' ' });
            utf16 += 1;
            char_count += 1;
        }
        let (word, kind): (&str, Option<TextEntityType>) = if rng.chance(4) {
            let (word, marked) = rng.pick(MARKED);
            let kind = match marked {
                Marked::Hashtag => TextEntityType::Hashtag(TextEntityTypeHashtag {}),
                Marked::Mention => TextEntityType::Mention(TextEntityTypeMention {}),
                Marked::Url => TextEntityType::Url(TextEntityTypeUrl {}),
                Marked::Email => TextEntityType::EmailAddress(TextEntityTypeEmailAddress {}),
                Marked::BotCommand => TextEntityType::BotCommand(TextEntityTypeBotCommand {}),
                Marked::CustomEmoji => TextEntityType::CustomEmoji(TextEntityTypeCustomEmoji {
                    custom_emoji_id: 5_368_324_170_671_202_286 + rng.range(0, 1_000_000),
                }),
            };
            (word, Some(kind))
        } else {
            let word = if rng.chance(18) { *rng.pick(OTHER_WORDS) } else { *rng.pick(ASCII_WORDS) };
            let styled = match rng.range(0, 60) {
                0 => Some(TextEntityType::Bold(TextEntityTypeBold {})),
                1 => Some(TextEntityType::Italic(TextEntityTypeItalic {})),
                2 => Some(TextEntityType::Code(TextEntityTypeCode {})),
                3 => Some(TextEntityType::TextUrl(TextEntityTypeTextUrl { url: "https://telegram.org/blog".into() })),
                4 => Some(TextEntityType::MentionName(TextEntityTypeMentionName { user_id: user_id(rng) })),
                _ => None,
            };
            (word, styled)
        };
        let length = word.encode_utf16().count() as i32;
        if let Some(kind) = kind {
            entities.push(TextEntity { offset: utf16, length, r#type: Some(kind) });
        }
        text.push_str(word);
        utf16 += length;
        char_count += word.chars().count();
    }
    (text, entities)
}

/// Plain ASCII words of exactly `len` bytes, nothing to escape: the string lanes measure
/// reading a string, so the report can set them against base64 (`bytes-*`) and leave escapes
/// to `option` against `option-plain`.
fn text_of_bytes(rng: &mut Rng, len: usize) -> String {
    let mut text = String::with_capacity(len + 16);
    while text.len() < len {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(rng.pick::<&str>(ASCII_WORDS));
    }
    text.truncate(len);
    text
}

pub(super) fn formatted_text(rng: &mut Rng, chars: usize) -> FormattedText {
    let (text, entities) = text(rng, chars);
    FormattedText { text, entities }
}

pub(super) fn short_string(rng: &mut Rng) -> String {
    let words = rng.range(1, 3);
    (0..words).map(|_| *rng.pick(ASCII_WORDS)).collect::<Vec<_>>().join(" ")
}

pub(super) fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// Counters, ids and flags: mostly small, some negative, some near the int32 limits.
fn vector_int(rng: &mut Rng) -> i32 {
    match rng.range(0, 9) {
        0..=5 => rng.range(0, 999) as i32,
        6 | 7 => rng.range(1000, 2_000_000_000) as i32,
        8 => -(rng.range(1, 100_000) as i32),
        _ => *rng.pick(&[i32::MIN, i32::MAX, -1, 0]),
    }
}

pub(super) fn sender(rng: &mut Rng) -> MessageSender {
    if rng.chance(85) {
        MessageSender::User(MessageSenderUser { user_id: user_id(rng) })
    } else {
        MessageSender::Chat(MessageSenderChat { chat_id: supergroup_chat_id(rng) })
    }
}

#[derive(Clone, Copy)]
pub(super) enum MessageKind {
    Text { min_chars: usize, max_chars: usize },
    Photo,
    Document,
}

pub(super) fn random_message_kind(rng: &mut Rng) -> MessageKind {
    match rng.range(0, 9) {
        0..=5 => MessageKind::Text { min_chars: 30, max_chars: 900 },
        6 | 7 => MessageKind::Photo,
        _ => MessageKind::Document,
    }
}

pub(super) fn minithumbnail(rng: &mut Rng) -> Minithumbnail {
    let len = rng.range(300, 700) as usize;
    Minithumbnail { width: 40, height: rng.range(22, 40) as i32, data: random_bytes(rng, len) }
}

fn content(rng: &mut Rng, kind: MessageKind) -> MessageContent {
    match kind {
        MessageKind::Text { min_chars, max_chars } => {
            let chars = rng.range(min_chars as i64, max_chars as i64) as usize;
            MessageContent::MessageText(MessageText {
                text: Some(formatted_text(rng, chars)),
                link_preview: None,
                link_preview_options: rng.chance(20).then(|| LinkPreviewOptions {
                    is_disabled: true,
                    url: String::new(),
                    force_small_media: false,
                    force_large_media: false,
                    show_above_text: false,
                }),
            })
        }
        MessageKind::Photo => {
            let sizes = ["m", "x", "y"]
                .iter()
                .enumerate()
                .map(|(i, t)| PhotoSize {
                    r#type: t.to_string(),
                    photo: Some(Box::new(file(rng, i == 0))),
                    width: 320 << i,
                    height: 240 << i,
                    progressive_sizes: if i == 2 { vec![6_144, 17_408, 28_672, 41_984, 62_271] } else { vec![] },
                })
                .collect();
            let caption_chars = if rng.chance(50) { rng.range(10, 120) as usize } else { 0 };
            MessageContent::MessagePhoto(MessagePhoto {
                photo: Some(Photo { has_stickers: false, minithumbnail: Some(minithumbnail(rng)), sizes }),
                video: None,
                caption: Some(formatted_text(rng, caption_chars)),
                show_caption_above_media: false,
                has_spoiler: rng.chance(5),
                is_secret: false,
            })
        }
        MessageKind::Document => {
            let (name, mime) = *rng.pick(FILE_NAMES);
            let downloaded = rng_bool(rng);
            let caption_chars = if rng.chance(40) { rng.range(10, 200) as usize } else { 0 };
            MessageContent::MessageDocument(MessageDocument {
                document: Some(Box::new(Document {
                    file_name: name.to_string(),
                    mime_type: mime.to_string(),
                    minithumbnail: None,
                    thumbnail: rng.chance(50).then(|| Thumbnail {
                        format: Some(ThumbnailFormat::Jpeg(ThumbnailFormatJpeg {})),
                        width: 90,
                        height: 90,
                        file: Some(Box::new(file(rng, true))),
                    }),
                    document: Some(Box::new(file(rng, downloaded))),
                })),
                caption: Some(formatted_text(rng, caption_chars)),
            })
        }
    }
}

pub(super) fn message(rng: &mut Rng, kind: MessageKind) -> Message {
    let date = unix_time(rng);
    let in_group = rng.chance(60);
    let chat_id = if in_group { supergroup_chat_id(rng) } else { user_id(rng) };
    let is_outgoing = rng.chance(30);
    Message {
        id: rng.range(1, 900_000) << 20,
        sender_id: Some(sender(rng)),
        receiver_id: None,
        chat_id,
        sending_state: None,
        scheduling_state: None,
        is_outgoing,
        is_pinned: rng.chance(3),
        is_from_offline: false,
        can_be_saved: true,
        has_timestamped_media: rng.chance(10),
        is_channel_post: false,
        is_paid_star_suggested_post: false,
        is_paid_gram_suggested_post: false,
        contains_unread_mention: rng.chance(5),
        contains_unread_poll_votes: false,
        date,
        edit_date: if rng.chance(15) { date + rng.range(10, 3600) as i32 } else { 0 },
        forward_info: rng.chance(15).then(|| MessageForwardInfo {
            origin: Some(match rng.range(0, 2) {
                0 => MessageOrigin::User(MessageOriginUser { sender_user_id: user_id(rng) }),
                1 => MessageOrigin::HiddenUser(MessageOriginHiddenUser { sender_name: "Анна К.".into() }),
                _ => MessageOrigin::Channel(MessageOriginChannel {
                    chat_id: supergroup_chat_id(rng),
                    message_id: rng.range(1, 90_000) << 20,
                    author_signature: String::new(),
                }),
            }),
            date: date - rng.range(60, 86_400) as i32,
            source: None,
            public_service_announcement_type: String::new(),
        }),
        import_info: None,
        interaction_info: (in_group && rng.chance(50)).then(|| MessageInteractionInfo {
            view_count: rng.range(1, 50_000) as i32,
            forward_count: rng.range(0, 300) as i32,
            reply_info: rng.chance(50).then(|| MessageReplyInfo {
                reply_count: rng.range(1, 40) as i32,
                recent_replier_ids: (0..rng.range(1, 3)).map(|_| sender(rng)).collect(),
                last_read_inbox_message_id: 0,
                last_read_outbox_message_id: 0,
                last_message_id: rng.range(1, 900_000) << 20,
            }),
            reactions: None,
        }),
        unread_reactions: vec![],
        fact_check: None,
        suggested_post_info: None,
        reply_to: rng.chance(20).then(|| {
            Box::new(MessageReplyTo::Message(MessageReplyToMessage {
                chat_id: 0,
                message_id: rng.range(1, 900_000) << 20,
                quote: None,
                checklist_task_id: 0,
                poll_option_id: String::new(),
                origin: None,
                origin_send_date: 0,
                content: None,
            }))
        }),
        topic_id: (in_group && rng.chance(30)).then(|| MessageTopic::Forum(MessageTopicForum { forum_topic_id: rng.range(1, 400) as i32 })),
        self_destruct_type: None,
        self_destruct_in: 0.0,
        auto_delete_in: if rng.chance(10) { 86_400.0 } else { 0.0 },
        via_bot_user_id: 0,
        guest_bot_caller_id: None,
        sender_business_bot_user_id: 0,
        sender_boost_count: 0,
        sender_tag: String::new(),
        paid_message_star_count: 0,
        author_signature: String::new(),
        media_album_id: if matches!(kind, MessageKind::Photo) && rng.chance(30) {
            13_897_643_109_876_543 + rng.range(0, 1 << 20)
        } else {
            0
        },
        effect_id: 0,
        restriction_info: None,
        summary_language_code: String::new(),
        content: Some(Box::new(content(rng, kind))),
        reply_markup: None,
        ephemeral_message_id: 0,
    }
}

fn messages_page(rng: &mut Rng, count: usize) -> Messages {
    let messages = (0..count)
        .map(|_| {
            let kind = match rng.range(0, 19) {
                0..=16 => MessageKind::Text { min_chars: 10, max_chars: 150 },
                17 => MessageKind::Photo,
                _ => MessageKind::Document,
            };
            message(rng, kind)
        })
        .collect();
    Messages { total_count: rng.range(count as i64, 90_000) as i32, messages }
}

/// Option values with quotes, backslashes, controls and non-ASCII text, and a twin of the same
/// length in plain ASCII.
fn option_pair(rng: &mut Rng) -> (UpdateOption, UpdateOption) {
    const PIECES: &[&str] = &[
        "{\"title\":\"Новое обновление\",",
        "\"path\":\"C:\\\\Users\\\\Анна\\\\Telegram\",",
        "\"note\":\"line one\\nline two\",",
        "\"tab\":\"a\tb\",",
        "\"emoji\":\"🎉🚀\",",
        "\"quote\":\"«цитата» — \\\"ok\\\"\",",
        "\"zh\":\"更新已就绪\",",
        "\u{1}\u{1f}",
    ];
    let mut value = String::new();
    while value.chars().count() < 280 {
        value.push_str(rng.pick::<&str>(PIECES));
    }
    let plain: String = value.chars().map(|c| if c.is_ascii_alphanumeric() || c == ' ' { c } else { 'x' }).collect();
    let name = format!("x_client_config_{}", rng.range(1, 99));
    let option = |value: String| UpdateOption { name: name.clone(), value: Some(OptionValue::String(OptionValueString { value })) };
    (option(value), option(plain))
}

pub(super) fn startup_option(rng: &mut Rng, i: usize) -> UpdateOption {
    let (name, value) = match i % 6 {
        0 => ("version", OptionValue::String(OptionValueString { value: "1.8.66".into() })),
        1 => ("commit_hash", OptionValue::String(OptionValueString { value: "022d60202e446ad1287b9fb68e687c8a0760788b".into() })),
        2 => ("unix_time", OptionValue::Integer(OptionValueInteger { value: unix_time(rng) as i64 })),
        3 => ("my_id", OptionValue::Integer(OptionValueInteger { value: user_id(rng) })),
        4 => ("is_premium", OptionValue::Boolean(OptionValueBoolean { value: rng_bool(rng) })),
        _ => ("t_me_url", OptionValue::String(OptionValueString { value: "https://t.me/".into() })),
    };
    UpdateOption { name: name.into(), value: Some(value) }
}

/// Fields of every shape a newer TDLib might add: scalars, strings with escapes and braces,
/// nested objects with unknown types, nested arrays.
const UNKNOWN_FIELDS: &[&str] = &[
    r#""new_int_field":42"#,
    r#""new_flag":false"#,
    r#""new_double":1.250000"#,
    r#""new_string":"a \"quoted\" } ] \\ value""#,
    r#""new_object":{"@type":"newThing","nested":{"a":[1,2,{"b":null}],"s":"}{"},"ok":true}"#,
    r#""new_array":[{"@type":"newThing"},[1,[2,[3]]],"]",true,null,-0.5e3]"#,
    r#""new_null":null"#,
    r#""@extra":{"request":7}"#,
    r#""@client_id":1"#,
];

fn unknown_field_pairs(rng: &mut Rng) -> Vec<(String, String)> {
    let mut bases = Vec::new();
    for _ in 0..2 {
        bases.push(write(Object::UpdateUserStatus(user_status_update(rng))));
        bases.push(write(Object::UpdateFile(UpdateFile { file: Some(Box::new(file(rng, true))) })));
        let message = message(rng, MessageKind::Text { min_chars: 60, max_chars: 200 });
        bases.push(write(Object::UpdateNewMessage(UpdateNewMessage { message: Some(Box::new(message)) })));
        bases.push(write(Object::UpdateOption(option_pair(rng).0)));
    }
    bases
        .into_iter()
        .map(|base| {
            let mut line = base.clone();
            // After `@type` of objects at every depth (in reverse, so earlier positions hold).
            let mut positions: Vec<usize> = line.match_indices("\"@type\":\"").map(|(at, _)| at).collect();
            positions.reverse();
            for at in positions {
                if rng.chance(60) {
                    let end = at + 9 + line[at + 9..].find('"').expect("closing quote of @type") + 1;
                    line.insert_str(end, &format!(",{}", rng.pick(UNKNOWN_FIELDS)));
                }
            }
            // And as the last field of the payload.
            let last = line.len() - 1;
            line.insert_str(last, &format!(",{}", rng.pick(UNKNOWN_FIELDS)));
            (line, base)
        })
        .collect()
}

/// TDLib's own form of strings that need escapes, typed out by hand: re-encoding must give
/// these bytes back. (The raw DEL byte in the second line is not escaped by TDLib.)
pub const ESCAPES: &[&str] = &[
    r#"{"@type":"testString","value":"quote \" backslash \\ slash / newline \n tab \t return \r backspace \b formfeed \f"}"#,
    "{\"@type\":\"testString\",\"value\":\"controls \\u0000 \\u0001 \\u001f del \u{7f} end\"}",
    r#"{"@type":"testString","value":"caf\u00e9 na\u00efve \u00fcber se\u00f1or \u00c5ngstr\u00f6m"}"#,
    r#"{"@type":"testString","value":"\u041f\u0440\u0438\u0432\u0435\u0442 \u4e16\u754c \u0645\u0631\u062d\u0628\u0627"}"#,
    r#"{"@type":"testString","value":"emoji \ud83d\ude00 \ud83c\udf89 flag \ud83c\uddfa\ud83c\udde6 crab \ud83e\udd80"}"#,
    r#"{"@type":"formattedText","text":"Bold \u2014 caf\u00e9 \ud83d\ude00","entities":[{"@type":"textEntity","offset":0,"length":4,"type":{"@type":"textEntityTypeBold"}},{"@type":"textEntity","offset":12,"length":2,"type":{"@type":"textEntityTypeCustomEmoji","custom_emoji_id":"5368324170671202286"}}]}"#,
    r#"{"@type":"updateOption","name":"x_escapes","value":{"@type":"optionValueString","value":"{\"k\":\"C:\\\\dir\\\\file\",\"n\":\"a\nb\"}"}}"#,
    r#"{"@type":"testVectorString","value":["","\"","\\","\u00e9","\ud83d\ude00","/"]}"#,
];

/// Valid TDLib JSON that TDLib itself would not write, with the canonical bytes each must
/// re-encode to: `\/`, literal UTF-8, upper-case hex escapes, another field order, whitespace,
/// `@extra` and `@client_id`.
pub const ESCAPES_READER: &[(&str, &str)] = &[
    (r#"{"@type":"testString","value":"a\/b"}"#, r#"{"@type":"testString","value":"a/b"}"#),
    (
        "{\"@type\":\"testString\",\"value\":\"café 😀 Привет\"}",
        r#"{"@type":"testString","value":"caf\u00e9 \ud83d\ude00 \u041f\u0440\u0438\u0432\u0435\u0442"}"#,
    ),
    (r#"{"@type":"testString","value":"caf\u00E9 \uD83D\uDE00"}"#, r#"{"@type":"testString","value":"caf\u00e9 \ud83d\ude00"}"#),
    (r#"{"value":"x","@type":"testString"}"#, r#"{"@type":"testString","value":"x"}"#),
    (
        r#"{ "@type" : "textEntity" , "type" : { "@type" : "textEntityTypeBold" } , "length" : 4 , "offset" : 0 }"#,
        r#"{"@type":"textEntity","offset":0,"length":4,"type":{"@type":"textEntityTypeBold"}}"#,
    ),
    (r#"{"@type":"testString","@extra":{"id":[1,{"x":"}"}]},"value":"x","@client_id":3}"#, r#"{"@type":"testString","value":"x"}"#),
    (r#"{"@type":"testString","value":"tab\u0009nl\u000A"}"#, r#"{"@type":"testString","value":"tab\tnl\n"}"#),
];
