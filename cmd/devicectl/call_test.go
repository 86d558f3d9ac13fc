package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCallLocal(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
		check    func(t *testing.T, out map[string]any)
		stderr   string
	}{
		{
			name: "success",
			args: []string{"amplify_volume", `{"level": 80}`},
			check: func(t *testing.T, out map[string]any) {
				if out["status"] != "success" || out["level"] != 80.0 {
					t.Errorf("result %v, want status success and level 80", out)
				}
			},
		},
		{
			name: "expression",
			args: []string{"set_virtual_human_expression", `{"expression":"smile"}`},
			check: func(t *testing.T, out map[string]any) {
				if out["status"] != "success" {
					t.Errorf("result %v, want status success", out)
				}
			},
		},
		{
			name:     "out of range",
			args:     []string{"amplify_volume", `{"level": 150}`},
			wantCode: exitError,
			check:    wantRPCError(-32602, "tool_input.level"),
		},
		{
			name:     "input defaults to {}",
			args:     []string{"amplify_volume"},
			wantCode: exitError,
			check:    wantRPCError(-32602, "level"),
		},
		{
			name:     "wrong enum",
			args:     []string{"set_virtual_human_expression", `{"expression":"happy"}`},
			wantCode: exitError,
			check:    wantRPCError(-32602, "tool_input.expression"),
		},
		{
			name:     "unknown tool",
			args:     []string{"make_coffee", `{}`},
			wantCode: exitError,
			check:    wantRPCError(-32602, "make_coffee"),
		},
		{
			name:     "not JSON",
			args:     []string{"amplify_volume", `{"level":`},
			wantCode: exitUsage,
			stderr:   "devicectl: the tool input is not JSON",
		},
		{
			name:     "too many arguments",
			args:     []string{"amplify_volume", `{}`, `{}`},
			wantCode: exitUsage,
			stderr:   "usage: devicectl call TOOL [JSON]",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t.Context(), "", append([]string{"call"}, tc.args...)...)
			if r.code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.wantCode, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.stderr)
			}
			if tc.check == nil {
				return
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
			}
			tc.check(t, out)
		})
	}
}

// wantRPCError checks a printed JSON-RPC error object.
func wantRPCError(code int, details string) func(t *testing.T, out map[string]any) {
	return func(t *testing.T, out map[string]any) {
		t.Helper()
		data, _ := out["data"].(map[string]any)
		got, _ := data["details"].(string)
		if out["code"] != float64(code) || out["message"] != "Invalid params" || !strings.Contains(got, details) {
			t.Errorf("error %v, want code %d, message Invalid params, details naming %q", out, code, details)
		}
	}
}
