//go:build !openapi

package daemon

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/devicectl/devicectl/internal/config"
)

// errNoOpenAPI is why a build without the openapi tag refuses toolsets.openapi: the OpenAPI
// library (kin-openapi) would take the armv6 binary past its 9 MiB budget.
var errNoOpenAPI = errors.New("this devicectl is built without OpenAPI tool sets; build it with the openapi tag (make build TAGS=openapi, or go build -tags openapi ./cmd/devicectl)")

func newOpenAPISource(i int, _ config.OpenAPISetConfig, _ string, _ *slog.Logger, _ func(string)) (toolSource, error) {
	return nil, &config.Error{Key: fmt.Sprintf("toolsets.openapi[%d]", i+1), Err: errNoOpenAPI}
}
