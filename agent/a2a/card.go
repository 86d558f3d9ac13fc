package a2a

import (
	"context"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// The skill every card lists first: plain talk, whatever the tools.
const (
	chatSkillID   = "general"
	chatSkillName = "General Assistant"
	chatSkillDesc = "Say what you want in Chinese or English; the agent calls the device's tools and its own"
)

var chatExamples = []string{"把音量调到30", "turn it down to 20", "笑一个", "add 5 and 10"}

// a2aCard is the A2A card: 1.0 and 0.3 interfaces (a2av0 writes it as the union of both
// formats), skills = the tools a turn may use now.
func (h *Handler) a2aCard(ctx context.Context) (*a2a.AgentCard, error) {
	base := baseURLFrom(ctx)
	skills := []a2a.AgentSkill{{ID: chatSkillID, Name: chatSkillName, Description: chatSkillDesc, Tags: []string{"chat"}, Examples: chatExamples}}
	for _, d := range h.o.Runner.Tools("") {
		tags := []string{"tool"}
		for _, t := range []string{string(d.MainType), string(d.SubType)} {
			if t != "" {
				tags = append(tags, t)
			}
		}
		skills = append(skills, a2a.AgentSkill{ID: d.Name, Name: d.Name, Description: d.Description, Tags: tags})
	}
	return &a2a.AgentCard{
		Name:        h.o.Name,
		Description: h.o.Description,
		Version:     h.o.Version,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: base + PathJSONRPC, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: base + PathJSONRPCv03, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		Skills:             skills,
	}, nil
}

// The seed's card shape.
type (
	seedCard struct {
		Name        string      `json:"name"`
		Description string      `json:"description"`
		URL         string      `json:"url"`
		Version     string      `json:"version"`
		Skills      []seedSkill `json:"skills"`
	}
	seedSkill struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Examples    []string `json:"examples"`
	}
)

// serveSeedCard answers GET /agent-card in the seed's shape.
func (h *Handler) serveSeedCard(w http.ResponseWriter, r *http.Request) {
	c := seedCard{Name: h.o.Name, Description: h.o.Description, URL: baseURLFrom(r.Context()), Version: h.o.Version,
		Skills: []seedSkill{{ID: chatSkillID, Name: chatSkillName, Description: chatSkillDesc, Examples: chatExamples}}}
	for _, d := range h.o.Runner.Tools("") {
		c.Skills = append(c.Skills, seedSkill{ID: d.Name, Name: d.Name, Description: strings.TrimSpace(d.Description), Examples: []string{}})
	}
	writeJSON(w, http.StatusOK, c)
}
