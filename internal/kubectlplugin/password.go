package kubectlplugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func newPasswordCommand(env *environment) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "password mysql/<name> [--user app|root]",
		Short: "Print a MySQL's password, from the Secret it uses",
		Long: `password prints the password of a MySQL's application user (spec.user, --user app, the default)
or of root (--user root), read from the Secret the MySQL uses: the one it generated,
<name>-credentials, or spec.credentialsSecretRef. Only the password goes to the standard output,
for a pipe; a warning that a secret is being printed goes to the standard error.`,
		Example: `  kubectl appkeeper password mysql/db
  kubectl appkeeper password my/blog-mysql --user root | mysql -h 127.0.0.1 -u root --password="$(cat)"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRefOf(args[0], "mysql")
			if err != nil {
				return err
			}
			if user != "app" && user != "root" {
				return usagef("--user %s: the users are app (spec.user) and root", user)
			}
			return env.password(cmd.Context(), r, user)
		},
	}
	cmd.Flags().StringVar(&user, "user", "app", "app for spec.user, or root")
	return cmd
}

func (e *environment) password(ctx context.Context, r ref, user string) error {
	c, m, err := e.getMySQL(ctx, r)
	if err != nil {
		return err
	}
	key, account := appsv1alpha1.SecretKeyPassword, m.Spec.User
	if user == "root" {
		key, account = appsv1alpha1.SecretKeyRootPassword, "root"
	} else if account == "" {
		return fmt.Errorf("%s has no spec.user, so no application user: use --user root", r)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.SecretName()}, secret); err != nil {
		return apiError(err, fmt.Sprintf("secret/%s, the credentials of %s", m.SecretName(), r))
	}
	password, ok := secret.Data[key]
	if !ok {
		return fmt.Errorf("secret/%s, the credentials of %s, has no key %q", secret.Name, r, key)
	}
	fmt.Fprintf(e.streams.ErrOut, "Warning: printing the password of %s of %s (secret/%s key %s): anyone who sees this output can use it\n",
		account, r, secret.Name, key)
	fmt.Fprintln(e.streams.Out, string(password))
	return nil
}
