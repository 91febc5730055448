//! The start-up stream: what a logged-in client receives in its first sync, generated from a
//! fixed seed. 10,000 updates, about 20 MB of TDLib JSON: authorization and connection states,
//! options, then users, groups and the chats built on them, then the traffic of a client
//! catching up — new messages, statuses, files, last messages, positions, read marks and
//! deletions — addressed to the users, chats and messages generated before them, with some
//! objects sent again (a client replaces the one it holds).
//!
//! Generated in memory rather than committed: 20 MB in git would be rewritten by every change to
//! the generator. The generator keeps its own books ([`Expected`]), so a test can check what a
//! store holds after the stream without trusting the store's own logic.

use std::collections::{BTreeMap, BTreeSet};

use tdbench_models::*;

use super::synth::{self, MessageKind, Rng};

/// Bump when the stream changes on purpose.
pub const SEED: u64 = 0x57_a2_70_01;

/// Updates in the stream.
pub const UPDATES: usize = 10_000;

/// How many updates of each `@type` the stream carries, in the order they first appear. The
/// shares follow a client's first sync: users and messages dominate, with the chats that hold
/// the messages and the files and statuses that change while it catches up.
pub const PROPORTIONS: &[(&str, usize)] = &[
    ("updateAuthorizationState", 2),
    ("updateConnectionState", 3),
    ("updateOption", 60),
    ("updateUser", 1_600),
    ("updateBasicGroup", 50),
    ("updateSupergroup", 200),
    ("updateNewChat", 500),
    ("updateChatPosition", 400),
    ("updateUnreadMessageCount", 20),
    ("updateNewMessage", 3_845),
    ("updateUserStatus", 1_250),
    ("updateFile", 1_250),
    ("updateChatLastMessage", 420),
    ("updateChatReadInbox", 320),
    ("updateDeleteMessages", 80),
];

/// What a client's store must hold after the whole stream, from the generator's own books.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expected {
    pub users: BTreeSet<i64>,
    pub basic_groups: BTreeSet<i64>,
    pub supergroups: BTreeSet<i64>,
    pub chats: BTreeSet<i64>,
    /// Message ids by chat, deletions applied.
    pub messages: BTreeMap<i64, BTreeSet<i64>>,
    pub files: BTreeSet<i32>,
    pub options: BTreeSet<String>,
}

pub struct StartupStream {
    pub updates: Vec<Object>,
    pub expected: Expected,
}

/// The stream, the same on every call.
pub fn generate() -> StartupStream {
    let mut g = Generator { rng: Rng::new(SEED), expected: Expected::default(), updates: Vec::with_capacity(UPDATES), next_message: 1 };
    g.run();
    debug_assert_eq!(g.updates.len(), UPDATES);
    StartupStream { updates: g.updates, expected: g.expected }
}

/// The TDLib option names a start-up carries first; the rest are numbered client config keys.
const OPTION_NAMES: &[&str] = &[
    "version",
    "commit_hash",
    "unix_time",
    "my_id",
    "is_premium",
    "t_me_url",
    "authorization_date",
    "utc_time_offset",
    "message_text_length_max",
    "message_caption_length_max",
    "basic_group_size_max",
    "supergroup_size_max",
    "pinned_chat_count_max",
    "favorite_stickers_limit",
    "animation_search_bot_username",
    "venue_search_bot_username",
    "photo_search_bot_username",
    "telegram_service_notifications_chat_id",
    "replies_bot_chat_id",
    "group_anonymous_bot_user_id",
];

const FIRST_NAMES: &[&str] =
    &["Anna", "Ivan", "Мария", "Дмитрий", "李", "Sofia", "Lukas", "Aarav", "فاطمة", "Olga", "Kenji", "Chloé", "Mateo", "Zoë 🌸"];
const LAST_NAMES: &[&str] = &["", "Petrova", "Smith", "Иванов", "王", "Müller", "García", "Kumar", "Tanaka", "Dubois", "Kowalski"];
const GROUP_TITLES: &[&str] = &[
    "Release team",
    "Семья",
    "Rust Moscow",
    "TDLib chat",
    "Книжный клуб",
    "Weekend hikes 🏔",
    "家庭群",
    "Design reviews",
    "News digest",
    "Crypto alerts",
];

struct Generator {
    rng: Rng,
    expected: Expected,
    updates: Vec<Object>,
    next_message: i64,
}

impl Generator {
    fn run(&mut self) {
        let count = |name: &str| PROPORTIONS.iter().find(|(n, _)| *n == name).map_or(0, |(_, c)| *c);
        self.push(Object::UpdateAuthorizationState(UpdateAuthorizationState {
            authorization_state: Some(AuthorizationState::WaitTdlibParameters(AuthorizationStateWaitTdlibParameters {})),
        }));
        for i in 0..count("updateOption") {
            let option = self.option(i);
            self.expected.options.insert(option.name.clone());
            self.push(Object::UpdateOption(option));
        }
        self.push(Object::UpdateAuthorizationState(UpdateAuthorizationState {
            authorization_state: Some(AuthorizationState::Ready(AuthorizationStateReady {})),
        }));
        self.push(connection(ConnectionState::Connecting(ConnectionStateConnecting {})));

        // Who and what the chats are about, before the chats (TDLib's own order).
        let first_users = count("updateUser") * 4 / 5;
        let users: Vec<i64> = (0..first_users).map(|_| self.rng.range(100_000_000, 7_999_999_999)).collect();
        for &id in &users {
            self.user(id);
        }
        let basic_groups: Vec<i64> = (0..count("updateBasicGroup")).map(|_| self.rng.range(100_000, 999_999_999)).collect();
        for &id in &basic_groups {
            self.expected.basic_groups.insert(id);
            let group = BasicGroup {
                id,
                member_count: self.rng.range(2, 200) as i32,
                status: Some(self.member_status()),
                is_active: true,
                upgraded_to_supergroup_id: 0,
            };
            self.push(Object::UpdateBasicGroup(UpdateBasicGroup { basic_group: Some(group) }));
        }
        let supergroups: Vec<i64> = (0..count("updateSupergroup")).map(|_| self.rng.range(1_000_000_000, 2_999_999_999)).collect();
        for &id in &supergroups {
            self.supergroup(id);
        }
        self.push(connection(ConnectionState::Updating(ConnectionStateUpdating {})));

        // The chats, each in the main list with its last message.
        let mut chats = Vec::new();
        let (mut private, mut basic, mut super_) = (0, 0, 0);
        for i in 0..count("updateNewChat") {
            let (id, kind) = match i % 10 {
                0..=5 => {
                    let user = users[private];
                    private += 1;
                    (user, ChatType::Private(ChatTypePrivate { user_id: user }))
                }
                6 => {
                    let group = basic_groups[basic];
                    basic += 1;
                    (-group, ChatType::BasicGroup(ChatTypeBasicGroup { basic_group_id: group }))
                }
                _ => {
                    let group = supergroups[super_];
                    super_ += 1;
                    let channel = i % 10 == 9;
                    (-1_000_000_000_000 - group, ChatType::Supergroup(ChatTypeSupergroup { supergroup_id: group, is_channel: channel }))
                }
            };
            if !self.expected.chats.insert(id) {
                continue;
            }
            chats.push(id);
            self.chat(id, kind, &users);
        }
        // Random ids can coincide (never at this seed): top the stream up with positions.
        let positions = count("updateChatPosition") + count("updateNewChat") - chats.len();
        for i in 0..positions {
            let chat_id = chats[i % chats.len()];
            let position = self.position();
            self.push(Object::UpdateChatPosition(UpdateChatPosition { chat_id, position: Some(position) }));
        }
        for i in 0..count("updateUnreadMessageCount") {
            let chat_list = if i % 2 == 0 { ChatList::Main(ChatListMain {}) } else { ChatList::Archive(ChatListArchive {}) };
            let update = UpdateUnreadMessageCount {
                chat_list: Some(chat_list),
                unread_count: self.rng.range(0, 900) as i32,
                unread_unmuted_count: self.rng.range(0, 90) as i32,
            };
            self.push(Object::UpdateUnreadMessageCount(update));
        }
        self.push(connection(ConnectionState::Ready(ConnectionStateReady {})));

        // Catching up: everything else interleaved, in the stream's proportions.
        let mut left: Vec<(&str, usize)> = [
            "updateNewMessage",
            "updateUserStatus",
            "updateFile",
            "updateChatLastMessage",
            "updateChatReadInbox",
            "updateDeleteMessages",
            "updateUser",
        ]
        .iter()
        .map(|&name| (name, if name == "updateUser" { count(name) - first_users } else { count(name) }))
        .collect();
        let file_ids: Vec<i32> = (0..900).map(|i| 10 + i * 3).collect();
        while self.updates.len() < UPDATES {
            let total: usize = left.iter().map(|(_, n)| n).sum();
            let mut pick = self.rng.range(0, total as i64 - 1) as usize;
            let slot = left.iter().position(|(_, n)| {
                let here = pick < *n;
                pick = pick.saturating_sub(*n);
                here
            });
            let slot = slot.expect("counts add up to UPDATES");
            left[slot].1 -= 1;
            match left[slot].0 {
                "updateNewMessage" => {
                    let chat_id = *self.rng.pick(&chats);
                    let message = self.message(chat_id, &users);
                    self.expected.messages.entry(chat_id).or_default().insert(message.id);
                    self.push(Object::UpdateNewMessage(UpdateNewMessage { message: Some(Box::new(message)) }));
                }
                "updateUserStatus" => {
                    let mut update = synth::user_status_update(&mut self.rng);
                    update.user_id = *self.rng.pick(&users);
                    self.push(Object::UpdateUserStatus(update));
                }
                "updateFile" => {
                    let downloaded = synth::rng_bool(&mut self.rng);
                    let mut file = synth::file(&mut self.rng, downloaded);
                    file.id = *self.rng.pick(&file_ids);
                    self.expected.files.insert(file.id);
                    self.push(Object::UpdateFile(UpdateFile { file: Some(Box::new(file)) }));
                }
                "updateChatLastMessage" => {
                    let chat_id = *self.rng.pick(&chats);
                    let message = self.message(chat_id, &users);
                    let positions = vec![self.position()];
                    self.push(Object::UpdateChatLastMessage(UpdateChatLastMessage {
                        chat_id,
                        last_message: Some(Box::new(message)),
                        positions,
                    }));
                }
                "updateChatReadInbox" => {
                    let chat_id = *self.rng.pick(&chats);
                    let last = self.expected.messages.get(&chat_id).and_then(|ids| ids.last().copied()).unwrap_or(0);
                    let unread_count = self.rng.range(0, 40) as i32;
                    self.push(Object::UpdateChatReadInbox(UpdateChatReadInbox { chat_id, last_read_inbox_message_id: last, unread_count }));
                }
                "updateDeleteMessages" => {
                    // TDLib names messages the client has: a chat holding some, else later.
                    let start = self.rng.pick(&chats);
                    let holding = chats.iter().cycle().skip_while(|id| *id != start).take(chats.len());
                    let Some(chat_id) = holding.copied().find(|id| self.expected.messages.get(id).is_some_and(|m| !m.is_empty())) else {
                        left[slot].1 += 1;
                        continue;
                    };
                    let held = &mut self.expected.messages.get_mut(&chat_id).expect("found above");
                    let take = self.rng.range(1, 3) as usize;
                    let message_ids: Vec<i64> = held.iter().rev().step_by(2).take(take).copied().collect();
                    for id in &message_ids {
                        held.remove(id);
                    }
                    self.push(Object::UpdateDeleteMessages(UpdateDeleteMessages {
                        chat_id,
                        message_ids,
                        is_permanent: true,
                        from_cache: false,
                    }));
                }
                _ => {
                    // A user sent again: new status or name; the store must replace the old one.
                    let id = *self.rng.pick(&users);
                    self.user(id);
                }
            }
        }
    }

    fn push(&mut self, update: Object) {
        self.updates.push(update);
    }

    fn option(&mut self, i: usize) -> UpdateOption {
        if i < 6 {
            return synth::startup_option(&mut self.rng, i);
        }
        let name = OPTION_NAMES.get(i).map_or_else(|| format!("x_client_config_{i}"), |n| n.to_string());
        let value = match i % 3 {
            0 => OptionValue::Integer(OptionValueInteger { value: self.rng.range(1, 200_000) }),
            1 => OptionValue::Boolean(OptionValueBoolean { value: synth::rng_bool(&mut self.rng) }),
            _ => OptionValue::String(OptionValueString { value: synth::short_string(&mut self.rng) }),
        };
        UpdateOption { name, value: Some(value) }
    }

    fn user(&mut self, id: i64) {
        self.expected.users.insert(id);
        let rng = &mut self.rng;
        let first_name = rng.pick(FIRST_NAMES).to_string();
        let last_name = rng.pick(LAST_NAMES).to_string();
        let has_username = rng.chance(60);
        let username =
            format!("{}_{}", first_name.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase(), id % 10_000);
        let kind = match rng.range(0, 49) {
            0..=44 => UserType::Regular(UserTypeRegular {}),
            45..=47 => UserType::Bot(UserTypeBot {
                can_join_groups: true,
                can_read_all_group_messages: rng.chance(20),
                inline_query_placeholder: if rng.chance(30) { "Search…".into() } else { String::new() },
                active_user_count: rng.range(0, 2_000_000) as i32,
                ..Default::default()
            }),
            _ => UserType::Deleted(UserTypeDeleted {}),
        };
        let user = User {
            id,
            first_name,
            last_name,
            usernames: has_username.then(|| Usernames {
                active_usernames: vec![username.clone()],
                disabled_usernames: vec![],
                editable_username: username,
                collectible_usernames: vec![],
            }),
            phone_number: if rng.chance(40) { format!("7{}", rng.range(9_000_000_000, 9_999_999_999)) } else { String::new() },
            status: synth::user_status_update(rng).status,
            profile_photo: rng.chance(70).then(|| ProfilePhoto {
                id: rng.range(1 << 40, 1 << 62),
                small: Some(Box::new(synth::file(rng, true))),
                big: Some(Box::new(synth::file(rng, false))),
                minithumbnail: rng.chance(70).then(|| synth::minithumbnail(rng)),
                has_animation: rng.chance(5),
                is_personal: false,
            }),
            accent_color_id: rng.range(0, 6) as i32,
            background_custom_emoji_id: if rng.chance(10) { 5_368_324_170_671_202_286 + rng.range(0, 1_000_000) } else { 0 },
            profile_accent_color_id: -1,
            is_contact: rng.chance(40),
            is_mutual_contact: rng.chance(25),
            is_premium: rng.chance(8),
            have_access: true,
            r#type: Some(kind),
            language_code: if rng.chance(50) { rng.pick(&["en", "ru", "de", "es", "zh-hans"]).to_string() } else { String::new() },
            ..Default::default()
        };
        self.push(Object::UpdateUser(UpdateUser { user: Some(Box::new(user)) }));
    }

    fn member_status(&mut self) -> ChatMemberStatus {
        match self.rng.range(0, 9) {
            0 => ChatMemberStatus::Creator(ChatMemberStatusCreator { is_anonymous: false, is_member: true }),
            1 => ChatMemberStatus::Administrator(ChatMemberStatusAdministrator {
                can_be_edited: false,
                rights: Some(ChatAdministratorRights {
                    can_manage_chat: true,
                    can_delete_messages: true,
                    can_pin_messages: true,
                    ..Default::default()
                }),
            }),
            2 => ChatMemberStatus::Left(ChatMemberStatusLeft {}),
            _ => ChatMemberStatus::Member(ChatMemberStatusMember { member_until_date: 0 }),
        }
    }

    fn supergroup(&mut self, id: i64) {
        self.expected.supergroups.insert(id);
        let status = self.member_status();
        let rng = &mut self.rng;
        let is_channel = rng.chance(30);
        let supergroup = Supergroup {
            id,
            usernames: rng.chance(40).then(|| {
                let name = format!("group_{}", id % 100_000);
                Usernames { active_usernames: vec![name.clone()], editable_username: name, ..Default::default() }
            }),
            date: synth::unix_time(rng),
            status: Some(status),
            member_count: rng.range(3, 250_000) as i32,
            boost_level: if rng.chance(10) { rng.range(1, 20) as i32 } else { 0 },
            sign_messages: is_channel && rng.chance(30),
            join_to_send_messages: rng.chance(20),
            is_channel,
            is_forum: !is_channel && rng.chance(10),
            ..Default::default()
        };
        self.push(Object::UpdateSupergroup(UpdateSupergroup { supergroup: Some(Box::new(supergroup)) }));
    }

    fn position(&mut self) -> ChatPosition {
        ChatPosition {
            list: Some(ChatList::Main(ChatListMain {})),
            order: (synth::unix_time(&mut self.rng) as i64) << 32 | self.rng.range(0, 1 << 20),
            is_pinned: self.rng.chance(3),
            source: None,
        }
    }

    fn chat(&mut self, id: i64, kind: ChatType, users: &[i64]) {
        let title = match &kind {
            ChatType::Private(_) => format!("{} {}", self.rng.pick(FIRST_NAMES), self.rng.pick(LAST_NAMES)).trim_end().to_string(),
            _ => self.rng.pick(GROUP_TITLES).to_string(),
        };
        let is_group = !matches!(kind, ChatType::Private(_));
        let last_message = self.message(id, users);
        let last_id = last_message.id;
        let position = self.position();
        let rng = &mut self.rng;
        let chat = Chat {
            id,
            r#type: Some(kind),
            title,
            photo: rng.chance(70).then(|| ChatPhotoInfo {
                small: Some(Box::new(synth::file(rng, true))),
                big: Some(Box::new(synth::file(rng, false))),
                minithumbnail: rng.chance(70).then(|| synth::minithumbnail(rng)),
                has_animation: false,
                is_personal: false,
            }),
            accent_color_id: rng.range(0, 6) as i32,
            profile_accent_color_id: -1,
            permissions: Some(ChatPermissions {
                can_send_basic_messages: true,
                can_send_audios: true,
                can_send_documents: true,
                can_send_photos: true,
                can_send_videos: true,
                can_send_video_notes: true,
                can_send_voice_notes: true,
                can_send_polls: is_group,
                can_send_other_messages: true,
                can_add_link_previews: true,
                can_react_to_messages: true,
                can_invite_users: !is_group || rng.chance(50),
                ..Default::default()
            }),
            last_message: Some(Box::new(last_message)),
            positions: vec![position],
            chat_lists: vec![ChatList::Main(ChatListMain {})],
            can_be_deleted_only_for_self: true,
            can_be_deleted_for_all_users: !is_group,
            can_be_reported: is_group,
            unread_count: if rng.chance(40) { rng.range(1, 300) as i32 } else { 0 },
            last_read_inbox_message_id: last_id,
            last_read_outbox_message_id: last_id,
            unread_mention_count: if is_group && rng.chance(10) { rng.range(1, 5) as i32 } else { 0 },
            notification_settings: Some(ChatNotificationSettings {
                use_default_mute_for: rng.chance(80),
                use_default_sound: true,
                use_default_show_preview: true,
                show_preview: true,
                use_default_mute_stories: true,
                use_default_story_sound: true,
                use_default_show_story_poster: true,
                use_default_disable_pinned_message_notifications: true,
                use_default_disable_mention_notifications: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        self.push(Object::UpdateNewChat(UpdateNewChat { chat: Some(Box::new(chat)) }));
    }

    /// A message in `chat_id` from one of `users`, with an id above every earlier one.
    fn message(&mut self, chat_id: i64, users: &[i64]) -> Message {
        let kind = synth::random_message_kind(&mut self.rng);
        let kind = match kind {
            // Start-up text is longer than a page of history: whole messages, not previews.
            MessageKind::Text { .. } => MessageKind::Text { min_chars: 100, max_chars: 1_000 },
            other => other,
        };
        let mut message = synth::message(&mut self.rng, kind);
        message.id = self.next_message << 20;
        self.next_message += 1;
        message.chat_id = chat_id;
        if chat_id > 0 {
            let user = if message.is_outgoing { *self.rng.pick(users) } else { chat_id };
            message.sender_id = Some(MessageSender::User(MessageSenderUser { user_id: user }));
        } else if let Some(MessageSender::User(sender)) = &mut message.sender_id {
            sender.user_id = *self.rng.pick(users);
        }
        message
    }
}

fn connection(state: ConnectionState) -> Object {
    Object::UpdateConnectionState(UpdateConnectionState { state: Some(state) })
}
