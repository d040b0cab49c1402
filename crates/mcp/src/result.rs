//! What the model reads of an MCP tool's result, from the result's JSON
//! (`content` blocks, `structuredContent`, `isError`). Pure.
//!
//! Text blocks are kept as they are, one after another. A picture or a
//! sound is named with its type and size, since a tool result is text; a
//! picture the model can be shown ([`images`]) travels beside it. An embedded resource shows its URI and its text; a resource link
//! its name and URI. Structured content is added as JSON only when no
//! block carries text: a server that sends both (as the protocol asks, for
//! clients that read only text) sends the same result twice, and the model
//! reads it once. The whole is capped at [`MAX_RESULT_BYTES`], like a file
//! read.

use serde_json::Value;

/// The most of one result the model reads: the same cap as `read_file`.
pub const MAX_RESULT_BYTES: usize = 64 * 1024;

/// The result's text for the model, and whether the server flagged it as an error.
pub fn render(result: &Value) -> (String, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let blocks = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut parts: Vec<String> = blocks.iter().map(block).collect();
    if let Some(structured) = result.get("structuredContent") {
        let has_text =
            blocks.iter().any(|b| matches!(b.get("type").and_then(Value::as_str), Some("text" | "resource")));
        if !has_text {
            let json = serde_json::to_string_pretty(structured).unwrap_or_default();
            parts.push(format!("structured content:\n{json}"));
        }
    }
    let text = if parts.is_empty() { "(the tool returned no content)".to_owned() } else { parts.join("\n") };
    (cap(text), is_error)
}

fn block(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
    // The decoded size of base64 data, without decoding it.
    let size = |data: &str| (data.len() / 4 * 3).saturating_sub(data.bytes().rev().take_while(|b| *b == b'=').count());
    match field("type") {
        "text" => field("text").to_owned(),
        "image" => format!("[image: {}, {} bytes]", field("mimeType"), size(field("data"))),
        "audio" => format!("[audio: {}, {} bytes]", field("mimeType"), size(field("data"))),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => {
                    let blob = resource.get("blob").and_then(Value::as_str).unwrap_or_default();
                    format!("[resource {uri}: binary, {} bytes]", size(blob))
                }
            }
        }
        "resource_link" => format!("[resource link: {} <{}>]", field("name"), field("uri")),
        _ => block.to_string(),
    }
}

/// The result's pictures a model can be shown: PNG, JPEG, GIF or WebP
/// image blocks whose data decodes, up to [`seri_core::MAX_IMAGE_BYTES`]
/// each. Others stay named in the text only.
pub fn images(result: &Value) -> Vec<seri_tools::ToolImage> {
    use base64::Engine as _;
    let blocks = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .filter_map(|b| {
            let data = base64::engine::general_purpose::STANDARD.decode(b.get("data")?.as_str()?).ok()?;
            let media_type = seri_core::image_media_type(&data)?;
            (data.len() as u64 <= seri_core::MAX_IMAGE_BYTES)
                .then(|| seri_tools::ToolImage { media_type: media_type.to_owned(), data })
        })
        .collect()
}

/// `text` cut to [`MAX_RESULT_BYTES`] on a character boundary, saying how much was cut.
fn cap(text: String) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text;
    }
    let mut end = MAX_RESULT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… cut: {} more bytes of the result", &text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_block_reads_as_text() {
        let result = json!({
            "content": [
                {"type": "text", "text": "Echo: hi"},
                {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "alpha"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"},
            ],
        });
        insta::assert_snapshot!(render(&result).0, @r#"
        Echo: hi
        [image: image/png, 8 bytes]
        [resource file:///a.txt]
        alpha
        [resource file:///b.bin: binary, 3 bytes]
        [resource link: c <file:///c>]
        "#);
    }

    #[test]
    fn pictures_that_decode_are_kept_and_others_only_named() {
        let png = "iVBORw0KGgoAAAANSUhEUg==";
        let result = json!({"content": [
            {"type": "image", "mimeType": "image/png", "data": png},
            {"type": "image", "mimeType": "image/png", "data": "not base64!"},
            {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
        ]});
        let images = images(&result);
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].media_type, "image/png");
        assert!(images[0].data.starts_with(b"\x89PNG"));
    }

    #[test]
    fn structured_content_is_read_only_when_no_block_carries_text() {
        let result = json!({"content": [{"type": "text", "text": "{\"sum\": 3}"}], "structuredContent": {"sum": 3}});
        assert_eq!(render(&result), ("{\"sum\": 3}".to_owned(), false));
        // The text says it in words: the same result, not sent again.
        let worded = json!({"content": [{"type": "text", "text": "The sum is 3."}], "structuredContent": {"sum": 3}});
        assert_eq!(render(&worded).0, "The sum is 3.");
        let only = json!({"content": [], "structuredContent": {"sum": 3}});
        assert_eq!(render(&only).0, "structured content:\n{\n  \"sum\": 3\n}");
        assert_eq!(render(&json!({"isError": true})), ("(the tool returned no content)".to_owned(), true));
    }

    #[test]
    fn a_huge_result_is_cut_on_a_character_boundary() {
        let text = "é".repeat(MAX_RESULT_BYTES);
        let (shown, _) = render(&json!({"content": [{"type": "text", "text": text}]}));
        assert!(shown.len() < MAX_RESULT_BYTES + 100);
        assert!(shown.ends_with(&format!("… cut: {} more bytes of the result", MAX_RESULT_BYTES)));
    }
}
