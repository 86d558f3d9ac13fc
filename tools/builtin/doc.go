// Package builtin provides the device's own tools, the ones every devicectl
// device declares:
//
//   - amplify_volume (remote, control): sets the speaker volume; the input
//     level is an integer 0..100; resource "speaker". The result reports the
//     level read back from the speaker, which may differ from the one asked
//     for on hardware with coarser steps:
//     {"status":"success","message":"音量已成功设置为 80","level":80}
//   - set_virtual_human_expression (remote, control): shows one of
//     hal.Expressions() on the face; resource "face". The result reports the
//     expression read back.
//   - get_device_status (remote, query): no parameters; reports volume,
//     expression, uptime (seconds and human), version and connection state.
//     It declares both resources although it only reads: the hal interfaces
//     do not promise that a backend tolerates a read in the middle of a
//     write, so the per-resource lock serialises it with the control tools,
//     and the status shows a change only once it is complete. If a reading
//     fails, the result is still returned with "status":"partial" and the
//     reasons under "errors", since the rest is still worth having.
//
// A tool whose hardware is absent (a nil Options.Speaker or Face) is not
// registered, and the status leaves that reading out.
//
// All three are built with tools.Func: the input structs carry the
// constraints (`tool:"min=0,max=100"`, `tool:"enum=..."`), so input reaches
// the hardware only after validation.
//
// # Language
//
// Descriptions are written for the server's language model: when to call
// the tool and what each value means. They, and the result and failure
// messages, are in Chinese by default and in English with Options.Language
// "en"; all the text is in text.go. Failures are concise sentences for a
// human that become -32000 errors upstream, e.g.
// "执行失败：无法设置音量：<cause>"; they wrap the hardware's error, so
// errors.Is(err, hal.ErrOutOfRange) still works.
package builtin
