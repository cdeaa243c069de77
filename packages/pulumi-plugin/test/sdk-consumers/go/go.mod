module app-serving.local/plugin-consumer

go 1.25

require (
	github.com/app-serving/pulumi-app-serving/sdk/go v0.0.0
	github.com/pulumi/pulumi/sdk/v3 v3.276.0
)
