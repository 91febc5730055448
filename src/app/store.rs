//! The store an app keeps: every user, group, chat, message and file it has been told about,
//! updated the way a client applies TDLib's updates — an object sent again replaces the one held
//! (and the old one is dropped), a position or a last message is set in its chat, a deletion
//! removes messages. What a decode produces is kept, not dropped: the difference between a
//! corpus figure and an app figure.

use std::collections::{BTreeMap, HashMap};

use tdbench_models::*;

use crate::corpus::startup::Expected;

#[derive(Debug, Default, PartialEq)]
pub struct Store {
    pub authorization_state: Option<AuthorizationState>,
    pub connection_state: Option<ConnectionState>,
    pub options: HashMap<String, Option<OptionValue>>,
    pub users: HashMap<i64, Box<User>>,
    pub basic_groups: HashMap<i64, BasicGroup>,
    pub supergroups: HashMap<i64, Box<Supergroup>>,
    pub chats: HashMap<i64, Box<Chat>>,
    /// Messages by chat, then by id.
    pub messages: HashMap<i64, BTreeMap<i64, Message>>,
    pub files: HashMap<i32, Box<File>>,
    /// Unread counters by chat list (`chatListMain`, `chatListArchive`, a folder's id).
    pub unread_counts: HashMap<String, (i32, i32)>,
    /// Updates naming a user or chat the store has not been told about, or carrying no object:
    /// TDLib never sends them, so a stream that makes any is wrong.
    pub unmatched: usize,
    /// Objects that are not updates a client applies (a stream of them is wrong too).
    pub ignored: usize,
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    /// Applies one decoded update.
    pub fn apply(&mut self, update: Object) {
        match update {
            Object::UpdateAuthorizationState(u) => self.authorization_state = u.authorization_state,
            Object::UpdateConnectionState(u) => self.connection_state = u.state,
            Object::UpdateOption(u) => {
                self.options.insert(u.name, u.value);
            }
            Object::UpdateUser(u) => match u.user {
                Some(user) => {
                    self.users.insert(user.id, user);
                }
                None => self.unmatched += 1,
            },
            Object::UpdateUserStatus(u) => match self.users.get_mut(&u.user_id) {
                Some(user) => user.status = u.status,
                None => self.unmatched += 1,
            },
            Object::UpdateBasicGroup(u) => match u.basic_group {
                Some(group) => {
                    self.basic_groups.insert(group.id, group);
                }
                None => self.unmatched += 1,
            },
            Object::UpdateSupergroup(u) => match u.supergroup {
                Some(group) => {
                    self.supergroups.insert(group.id, group);
                }
                None => self.unmatched += 1,
            },
            Object::UpdateNewChat(u) => match u.chat {
                Some(chat) => {
                    self.chats.insert(chat.id, chat);
                }
                None => self.unmatched += 1,
            },
            Object::UpdateChatPosition(u) => match (self.chats.get_mut(&u.chat_id), u.position) {
                (Some(chat), Some(position)) => set_position(&mut chat.positions, position),
                _ => self.unmatched += 1,
            },
            Object::UpdateChatLastMessage(u) => match self.chats.get_mut(&u.chat_id) {
                Some(chat) => {
                    chat.last_message = u.last_message;
                    for position in u.positions {
                        set_position(&mut chat.positions, position);
                    }
                }
                None => self.unmatched += 1,
            },
            Object::UpdateChatReadInbox(u) => match self.chats.get_mut(&u.chat_id) {
                Some(chat) => {
                    chat.last_read_inbox_message_id = u.last_read_inbox_message_id;
                    chat.unread_count = u.unread_count;
                }
                None => self.unmatched += 1,
            },
            Object::UpdateUnreadMessageCount(u) => {
                let list = match u.chat_list {
                    Some(ChatList::Main(_)) => "chatListMain".to_string(),
                    Some(ChatList::Archive(_)) => "chatListArchive".to_string(),
                    Some(ChatList::Folder(folder)) => format!("chatListFolder {}", folder.chat_folder_id),
                    None => String::new(),
                };
                self.unread_counts.insert(list, (u.unread_count, u.unread_unmuted_count));
            }
            Object::UpdateNewMessage(u) => match u.message {
                Some(message) if self.chats.contains_key(&message.chat_id) => {
                    self.messages.entry(message.chat_id).or_default().insert(message.id, *message);
                }
                _ => self.unmatched += 1,
            },
            Object::UpdateDeleteMessages(u) => match self.messages.get_mut(&u.chat_id) {
                Some(held) => {
                    for id in u.message_ids {
                        held.remove(&id);
                    }
                }
                None => self.unmatched += 1,
            },
            Object::UpdateFile(u) => match u.file {
                Some(file) => {
                    self.files.insert(file.id, file);
                }
                None => self.unmatched += 1,
            },
            _ => self.ignored += 1,
        }
    }

    /// What the store holds, in the form of the generator's books.
    pub fn held(&self) -> Expected {
        Expected {
            users: self.users.keys().copied().collect(),
            basic_groups: self.basic_groups.keys().copied().collect(),
            supergroups: self.supergroups.keys().copied().collect(),
            chats: self.chats.keys().copied().collect(),
            messages: self.messages.iter().map(|(&chat, held)| (chat, held.keys().copied().collect())).collect(),
            files: self.files.keys().copied().collect(),
            options: self.options.keys().cloned().collect(),
        }
    }
}

/// A chat's position in one list: replaced when the chat already has one there, removed when
/// the new order is 0 (TDLib's way of saying the chat left the list).
fn set_position(positions: &mut Vec<ChatPosition>, position: ChatPosition) {
    positions.retain(|held| held.list != position.list);
    if position.order != 0 {
        positions.push(position);
    }
}
