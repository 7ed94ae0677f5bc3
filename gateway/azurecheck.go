package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// The check of an azure upstream's credentials ([Gateway.CheckCredentials])
// follows azidentity's default chain: the sources found without the
// network first (the environment, workload identity's token file, the
// developer tools on PATH), then the managed identity's endpoint, which
// needs the network, within NetworkCheckTimeout.

// azureSource is one source of azidentity's default chain: its credential
// type's name (what AZURE_TOKEN_CREDENTIALS names it by) and how a check
// finds it locally (nil: it needs the network).
type azureSource struct {
	name, group string // group: "prod" or "dev", AZURE_TOKEN_CREDENTIALS's groups
	local       func() (source, absent string, err error)
}

// azureSources are the default chain's sources, in its order.
var azureSources = []azureSource{
	{"EnvironmentCredential", "prod", azureEnvSource},
	{"WorkloadIdentityCredential", "prod", azureWorkloadSource},
	{"ManagedIdentityCredential", "prod", nil},
	{"AzureCLICredential", "dev", azureTool("az", "the Azure CLI")},
	{"AzureDeveloperCLICredential", "dev", azureTool("azd", "the Azure Developer CLI")},
	{"AzurePowerShellCredential", "dev", azureTool("pwsh", "Azure PowerShell")},
}

// selected reports whether AZURE_TOKEN_CREDENTIALS's value sel leaves
// source s in the chain ("": every source).
func (s azureSource) selected(sel string) bool {
	return sel == "" || sel == s.group || strings.EqualFold(sel, s.name)
}

// check finds the first source of the chain that has credentials here:
// a local one, else the managed identity within NetworkCheckTimeout (a
// warning: it needs the network). Nothing found is a problem naming every
// source looked at.
func (a *azureAuth) check(ctx context.Context) (string, string, error) {
	sel := os.Getenv("AZURE_TOKEN_CREDENTIALS")
	var looked []string
	for _, s := range azureSources {
		if !s.selected(sel) || s.local == nil {
			continue
		}
		src, absent, err := s.local()
		if err != nil {
			return src, "", err
		}
		if src != "" {
			return src, "", nil
		}
		looked = append(looked, absent)
	}
	if azureSources[2].selected(sel) {
		where := azureIdentityEndpoint()
		if err := a.managedIdentity(ctx); err == nil {
			return "the managed identity at " + where, "the Azure token comes from the managed identity at " + where + ", which needs the network", nil
		}
		looked = append(looked, fmt.Sprintf("the managed identity at %s did not give a token within %v", where, NetworkCheckTimeout))
	}
	all := strings.Join(looked, ", ")
	if sel != "" {
		all = "AZURE_TOKEN_CREDENTIALS=" + sel + " selects: " + all
	}
	return all, "", errors.New("no Azure credentials: " + all)
}

// azureEnvSource finds a service principal in the environment
// (EnvironmentCredential's variables); one that is set but does not load
// (a variable missing, a certificate unreadable) is a problem.
func azureEnvSource() (string, string, error) {
	const absent = "AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH and AZURE_USERNAME are not set"
	var by string
	for _, v := range []string{"AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME"} {
		if os.Getenv(v) != "" {
			by = v
			break
		}
	}
	if by == "" {
		return "", absent, nil
	}
	src := "the environment (" + by + ")"
	if _, err := azidentity.NewEnvironmentCredential(nil); err != nil {
		return src, "", fmt.Errorf("%s is set but the environment's Azure credentials do not load: %w", by, err)
	}
	return src, "", nil
}

// azureWorkloadSource finds workload identity's variables (set by its
// Kubernetes webhook) and reads its token file.
func azureWorkloadSource() (string, string, error) {
	file := os.Getenv("AZURE_FEDERATED_TOKEN_FILE")
	if file == "" {
		return "", "AZURE_FEDERATED_TOKEN_FILE is not set", nil
	}
	src := "workload identity (AZURE_FEDERATED_TOKEN_FILE " + file + ")"
	for _, v := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID"} {
		if os.Getenv(v) == "" {
			return src, "", fmt.Errorf("AZURE_FEDERATED_TOKEN_FILE is set but %s is not", v)
		}
	}
	if b, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(b)) == "" {
		return src, "", fmt.Errorf("workload identity's token file %s cannot be read or is empty", file)
	}
	return src, "", nil
}

// azureTool finds a developer tool's binary on PATH (the token is its
// login's: the check does not run it).
func azureTool(bin, what string) func() (string, string, error) {
	return func() (string, string, error) {
		path, err := exec.LookPath(bin)
		if err != nil {
			return "", "no " + bin + " on PATH", nil
		}
		return what + " (" + path + ")", "", nil
	}
}

// azureIdentityEndpoint names the endpoint the managed identity credential
// asks, chosen from the environment as the SDK chooses it: a host's own
// (App Service and Service Fabric, Cloud Shell and Azure ML, Azure Arc),
// else the instance metadata endpoint.
func azureIdentityEndpoint() string {
	id, msi := os.Getenv("IDENTITY_ENDPOINT"), os.Getenv("MSI_ENDPOINT")
	switch {
	case id != "" && os.Getenv("IDENTITY_HEADER") != "", id != "" && os.Getenv("IMDS_ENDPOINT") != "":
		return "IDENTITY_ENDPOINT " + redactQuery(id)
	case msi != "":
		return "MSI_ENDPOINT " + redactQuery(msi)
	}
	return "169.254.169.254 (the instance metadata endpoint)"
}

// managedIdentity asks the managed identity credential for a token
// within NetworkCheckTimeout (the user-assigned identity of
// AZURE_CLIENT_ID when set, as the default chain does).
func (a *azureAuth) managedIdentity(ctx context.Context) error {
	opts := &azidentity.ManagedIdentityCredentialOptions{}
	opts.Transport = a.client
	if id := os.Getenv("AZURE_CLIENT_ID"); id != "" {
		opts.ID = azidentity.ClientID(id)
	}
	cred, err := azidentity.NewManagedIdentityCredential(opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, NetworkCheckTimeout)
	defer cancel()
	_, err = cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{a.scope}})
	return err
}
