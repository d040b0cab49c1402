//! What an editor's prompt holds, and which files a diff may show.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    BlobResourceContents, EmbeddedResource, EmbeddedResourceResource, ImageContent, ResourceLink, TextResourceContents,
};

use super::*;

#[test]
fn a_prompts_blocks_are_sorted_into_words_links_files_and_pictures() {
    let blocks = vec![
        ContentBlock::Text(TextContent::new("look at")),
        ContentBlock::ResourceLink(ResourceLink::new("a b.rs", "file:///work/a%20b.rs")),
        ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(
            TextResourceContents::new("fn unsaved() {}", "file:///work/c.rs"),
        ))),
        ContentBlock::Image(ImageContent::new("aGk=", "image/png")),
        ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::BlobResourceContents(
            BlobResourceContents::new("AAE=", "file:///work/d.bin"),
        ))),
        ContentBlock::Text(TextContent::new("please")),
    ];
    let content = Content::of(&blocks).unwrap();
    assert_eq!(content.text, "look at\nplease");
    assert_eq!(content.links, [PathBuf::from("/work/a b.rs")]);
    assert_eq!(content.embedded, [("/work/c.rs".to_owned(), "fn unsaved() {}".to_owned())]);
    assert_eq!(
        content.blobs,
        [("picture".to_owned(), Some("image/png".to_owned()), b"hi".to_vec()), ("d.bin".to_owned(), None, vec![0, 1]),]
    );
}

#[test]
fn a_link_seri_cannot_open_and_base64_that_is_not_are_refused_by_name() {
    let link = ContentBlock::ResourceLink(ResourceLink::new("x", "https://example.com/x"));
    let error = Content::of(&[link]).unwrap_err();
    assert!(error.message.contains("https://example.com/x"), "{error:?}");
    let picture = ContentBlock::Image(ImageContent::new("not base64!", "image/png"));
    assert!(Content::of(&[picture]).unwrap_err().message.contains("not base64"));
}

#[test]
fn a_diff_shows_only_files_inside_the_folder_and_outside_seris_own_places() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("work");
    let profile = cwd.join(".seri-profile");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(cwd.join("notes.txt"), "mine\n").unwrap();
    std::fs::write(profile.join("keys.env"), "SECRET=1\n").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "theirs\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.txt"), cwd.join("link.txt")).unwrap();
    std::fs::write(cwd.join("big.txt"), "x".repeat(MAX_BEFORE_BYTES as usize + 1)).unwrap();
    let protected = [profile.as_path()];
    let read = |written: &str| readable_before(Path::new(&cwd), &protected, written);
    assert_eq!(read("notes.txt").as_deref(), Some("mine\n"));
    assert_eq!(read(&cwd.join("notes.txt").display().to_string()).as_deref(), Some("mine\n"));
    assert_eq!(read(".seri-profile/keys.env"), None, "the profile, though inside the folder");
    assert_eq!(read("../outside.txt"), None);
    assert_eq!(read(&dir.path().join("outside.txt").display().to_string()), None);
    assert_eq!(read("link.txt"), None, "a link leading outside");
    assert_eq!(read("big.txt"), None);
    assert_eq!(read("missing.txt"), None);
}
