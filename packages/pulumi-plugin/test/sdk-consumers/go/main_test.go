package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// registration is what the engine would receive for one resource: the SDK test (TypeScript) reads
// these from $SEEN_JSON and holds them against the plugin's schema.
type registration struct {
	Type      string            `json:"type"`
	Name      string            `json:"name"`
	Custom    bool              `json:"custom"`
	Remote    bool              `json:"remote"`
	Providers map[string]string `json:"providers"`
	Inputs    map[string]any    `json:"inputs"`
	Secret    []string          `json:"secretInputs"`
}

type mocks struct {
	mu   sync.Mutex
	seen []registration
}

// What the plugin's construct would return, per component type (the mock engine has no plugin).
var states = map[string]map[string]any{
	"app-serving:index:LlmdModel":   {"gatewayUrl": "http://gw.example:80", "embeddingsUrl": "http://embed.example:8200"},
	"app-serving:index:KserveModel": {"pathPrefix": "/llm-d-tiny/tiny"},
	"app-serving:index:AppServing":  {"urls": map[string]any{"sim": "http://sim.example:80"}},
}

func (m *mocks) NewResource(args pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	rpc := args.RegisterRPC
	secret := []string{}
	inputs := map[string]any{}
	for key, value := range args.Inputs {
		if value.ContainsSecrets() {
			secret = append(secret, string(key))
			inputs[string(key)] = "[secret]"
		} else {
			inputs[string(key)] = value.Mappable()
		}
	}
	sort.Strings(secret)
	m.mu.Lock()
	m.seen = append(m.seen, registration{
		Type: args.TypeToken, Name: args.Name, Custom: args.Custom, Remote: rpc.GetRemote(),
		Providers: rpc.GetProviders(), Inputs: inputs, Secret: secret,
	})
	m.mu.Unlock()
	state := args.Inputs.Copy()
	for key, value := range resource.NewPropertyMapFromMap(states[args.TypeToken]) {
		state[key] = value
	}
	return args.Name + "-id", state, nil
}

func (m *mocks) Call(args pulumi.MockCallArgs) (resource.PropertyMap, error) {
	return nil, fmt.Errorf("unexpected invoke %s", args.Token)
}

func TestComponentsUnderMocks(t *testing.T) {
	m := &mocks{}
	outputs := map[string]any{}
	var mu sync.Mutex
	record := func(key string, output pulumi.Output) {
		output.ApplyT(func(v any) any {
			mu.Lock()
			defer mu.Unlock()
			outputs[key] = v
			return v
		})
	}
	err := pulumi.RunErr(func(ctx *pulumi.Context) error {
		d, err := deploy(ctx)
		if err != nil {
			return err
		}
		record("embeddingsUrl", d.embed.EmbeddingsUrl)
		record("gatewayUrl", d.mine.GatewayUrl)
		record("pathPrefix", d.tiny.PathPrefix)
		record("urls", d.stack.Urls)
		return nil
	}, pulumi.WithMocks("go", "dev", m))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.seen {
		if r.Type == "app-serving:index:LlmdModel" && !r.Remote {
			t.Errorf("%s: registered as a local component; the SDK must register it as a remote one", r.Name)
		}
	}
	out, err := json.MarshalIndent(map[string]any{"registrations": m.seen, "outputs": outputs}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("SEEN_JSON"); path != "" {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
