package stt

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/agent/memory"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// faceWords are how an expression of the face tool's enum is said, as the rule planner
// understands it; a value not listed is said as its words ("close_eyes" is "close eyes").
var faceWords = map[string][]string{
	"smile":            {"smile", "look happy"},
	"cry":              {"cry"},
	"amazed":           {"look amazed", "amazed"},
	"close_eyes":       {"close your eyes"},
	"close_eyes_smile": {"squint", "close your eyes and smile"},
	"idle":             {"neutral", "back to normal"},
}

// Grammar returns a JSGF grammar of what the rule planner understands with decls, the tools a
// turn may call: a volume with its number (0 to 100 in words), the faces the face tool's schema
// lists, status questions, arithmetic on two numbers, memories, reminders and timers, help and
// greetings. Phrases of a tool not in decls are left out, so a device without a face cannot be
// heard asking for one. The result depends only on decls (the same tools, the same bytes).
func Grammar(decls []tools.Declaration) []byte { return GrammarKnown(decls, nil) }

// GrammarKnown is Grammar keeping only the expressions whose every word known accepts: a
// recogniser refuses a whole grammar for one word its dictionary lacks. nil accepts every word.
func GrammarKnown(decls []tools.Declaration, known func(word string) bool) []byte {
	has := func(name string) bool {
		return slices.ContainsFunc(decls, func(d tools.Declaration) bool { return d.Name == name })
	}
	var rules []rule
	var top []string
	add := func(name string, alts ...string) {
		rules = append(rules, rule{name, alts})
	}
	usesNumber := false
	if has(protocol.ToolVolume) {
		top = append(top, "<volume>")
		usesNumber = true
		alts := []string{
			"(set | turn | change) [the] volume to <number> [percent]",
			"set volume to <number> [percent]",
			"volume <number> [percent]",
			"turn it (up | down) to <number> [percent]",
			"mute", "max volume", "min volume", "turn it up to the max",
		}
		if has(protocol.ToolStatus) { // relative changes read the level first
			alts = append(alts, "louder", "quieter", "too loud", "turn it (up | down) [by <number>]", "volume (up | down) [<number>]")
		}
		// "be quiet", which the planner also takes for mute, is left out: heard for "quieter"
		// now and then, it muted the speaker.
		add("volume", alts...)
	}
	if has(protocol.ToolExpression) {
		var alts []string
		for _, v := range enumStrings(decls, protocol.ToolExpression, "expression") {
			words, ok := faceWords[v]
			if !ok {
				if w := sayable(v); w != "" {
					words = []string{w}
				}
			}
			for _, w := range words {
				if known != nil && !allKnown(w, known) {
					continue
				}
				if !slices.Contains(alts, w) {
					alts = append(alts, w)
				}
			}
		}
		if len(alts) > 0 {
			top = append(top, "<face>")
			add("face", alts...)
		}
	}
	if has(protocol.ToolStatus) {
		top = append(top, "<status>")
		add("status", "how are you", "status", "what's the volume", "what is the volume", "what's your status")
	}
	if has(localtools.ToolCalculate) {
		top = append(top, "<calculate>")
		usesNumber = true
		add("calculate",
			"add <number> and <number>",
			"subtract <number> from <number>",
			"[what is] <number> (plus | minus | times | divided by) <number>",
			"multiply <number> by <number>",
			"square root of <number>")
	}
	if has(memory.ToolAdd) || has(memory.ToolSearch) || has(memory.ToolDelete) {
		var alts []string
		if has(memory.ToolAdd) {
			alts = append(alts, "remember that <fact>")
			add("fact",
				"i like (tea | coffee | music | science | cats | dogs | pizza)",
				"my name is (alice | bob | max | sam)",
				"my dog is called max",
				"i live in (paris | london | oslo | berlin)")
		}
		if has(memory.ToolSearch) {
			alts = append(alts, "what do i like", "what's my name", "where do i live", "what do you remember about me")
		}
		if has(memory.ToolDelete) {
			alts = append(alts, "forget that", "forget it")
		}
		top = append(top, "<memory>")
		add("memory", alts...)
	}
	if has(reminders.ToolSet) {
		top = append(top, "<remind>")
		usesNumber = true
		add("remind",
			"remind me in <number> <unit> to <task>",
			"remind me to <task> in <number> <unit>",
			"set a timer for <number> <unit>",
			"<number> minute timer")
		add("unit", "second", "seconds", "minute", "minutes", "hour", "hours")
		add("task", "drink water", "stretch", "call mom", "take my pills", "check the oven", "walk the dog", "go to bed")
	}
	top = append(top, "<chat>")
	add("chat", "help", "what can you do", "hello", "thanks", "thank you")
	if usesNumber {
		add("number", "zero", "<digit>", "<teen>", "<tens> [<digit>]", "one hundred")
		add("digit", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
		add("teen", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
		add("tens", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
	}

	var b bytes.Buffer
	b.WriteString("#JSGF V1.0;\n\ngrammar devicectl;\n\n")
	fmt.Fprintf(&b, "public <command> = %s;\n", strings.Join(top, " | "))
	for _, r := range rules {
		fmt.Fprintf(&b, "\n<%s> = %s;\n", r.name, strings.Join(r.alts, "\n    | "))
	}
	return b.Bytes()
}

type rule struct {
	name string
	alts []string
}

// sayable is an enum value as words a recogniser can hold: lower-case letters, '_' and '-' as
// spaces; "" when anything else is in it (a grammar with a stray symbol is refused whole).
func sayable(v string) string {
	v = strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(v))
	for _, r := range v {
		if (r < 'a' || r > 'z') && r != ' ' {
			return ""
		}
	}
	return strings.Join(strings.Fields(v), " ")
}

// enumStrings returns the string values the enum of tool's property lists.
func enumStrings(decls []tools.Declaration, tool, prop string) []string {
	for _, d := range decls {
		if d.Name != tool || d.Parameters == nil {
			continue
		}
		p := d.Parameters.Properties[prop]
		if p == nil {
			return nil
		}
		var out []string
		for _, v := range p.Enum {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func allKnown(phrase string, known func(string) bool) bool {
	for _, w := range strings.Fields(phrase) {
		if !known(w) {
			return false
		}
	}
	return true
}
