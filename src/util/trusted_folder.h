// The folders dlaunch writes in, checked so that no other local user can
// have put anything there first. A folder another user owns, or may write
// in, lets them plant a symbolic link at a name dlaunch is about to write
// (a log, a record, a temporary), and a root run would then overwrite
// whatever file the link names.
//
// Trusted: a folder this user owns (root too trusts only its own: a
// folder of another user is exactly where a link for root is planted),
// that no one else may write in unless its sticky bit is set (then others
// may add names but not remove or replace this user's, as in /tmp). Group
// write is allowed only for the user's own private group (named as the
// user, with no other members), which umask 002 systems give every folder.
#pragma once

#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace dlaunch::util {

// Why a folder cannot be trusted, and what the user can do about it.
struct FolderDistrust {
  std::string why;  // "belongs to another user (uid 1000), not to you (uid 0)"
  std::string fix;  // a sentence: "Choose a folder you own"
};

// Why FOLDER, whose stat is INFO, cannot be trusted by the user EUID
// (GROUP_IS_PRIVATE: its group is that user's private group); nullopt when
// it can. Pure.
std::optional<FolderDistrust> folder_distrust(const std::string& folder, const struct stat& info, uid_t euid,
                                              bool group_is_private);

// Whether GID is the private group of the user EUID: the group named as the
// user, with no members listed besides.
bool is_private_group(gid_t gid, uid_t euid);

// Throws InputError when FOLDER (which WHAT names: "--log-dir") cannot be
// trusted, naming it, why and what to do; or when it is a symbolic link of
// another user. A link of this user's (or root's) is followed: the user
// chose it. Throws SystemError when FOLDER cannot be looked at.
void check_trusted_folder(const std::string& folder, const std::string& what);

// Creates FOLDER (mode 0755, the umask applies) and its missing parents,
// then checks it as check_trusted_folder does. The folders a user names
// (--log-dir, --output-dir) come here.
void make_trusted_folder(const std::string& folder, const std::string& what);

// Creates the last COUNT components of FOLDER, each under the one before
// ("attempt_0/rank3" of a log folder: COUNT 2), whose first must exist. A
// component that exists already must be a real folder (not a symbolic
// link) that check_trusted_folder would take. Throws SystemError naming
// the component, what is wrong and what to do.
void make_own_folders(const std::string& folder, int count);

}  // namespace dlaunch::util
