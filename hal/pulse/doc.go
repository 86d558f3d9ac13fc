// Package pulse drives a speaker through the sound server of a desktop-style
// Linux: PulseAudio with pactl (Debian package pulseaudio-utils), or
// PipeWire with WirePlumber's wpctl (package wireplumber). pipewire-pulse
// also answers pactl, so pactl is the default and works with either. pactl
// must be from PulseAudio 14 or later, the first with get-sink-volume.
//
// The programs are run with an argument list, never through a shell, and
// each run is bound to the caller's context. Talking to the server through
// its command-line clients keeps devicectl free of cgo and of a client
// library for each server, at the cost of an exec per step.
//
// Volume asks the server every time. A sink with several channels reports
// the mean of them, rounded; a muted sink reports 0, because it is silent;
// a sink boosted above 100% (both servers allow it) reports 100, the most
// this interface can say. pactl percentages are the server's linear volume
// scale; wpctl's 0..1 fraction is WirePlumber's cubic scale, the one its
// volume sliders use; either way SetVolume(n) reads back as n.
//
// Halt mutes the sink and sets it to 0; SetVolume unmutes it, so the level
// it sets is the level heard.
package pulse
